"""Simulator profiles: the capacity, limits and faults of one pretend provider.

A profile is data, not code, so an experiment names the provider it runs
against (``default``, ``knee``, ``flaky``…) or loads one from a TOML/JSON
file, and two runs with the same profile and seed see the same behaviour.
All durations are in *simulator* (model) seconds except
``min_event_interval_s``, which bounds real CPU work and so is in real
seconds; ``time_scale`` says how much faster than real time the served
simulator runs.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentrt._errors import ConfigError, UnknownProfile

__all__ = [
    "DEFAULT_MODEL",
    "FAULT_KINDS",
    "PROFILES",
    "FaultRates",
    "SimProfile",
    "get_profile",
    "load_profile_file",
]

DEFAULT_MODEL = "sim-model"

# Fault kinds in the order the seeded draw maps onto them.
FAULT_KINDS = (
    "error_500",
    "error_503",
    "overloaded_529",
    "reset",
    "stall",
    "stream_cut",
    "malformed_json",
    "quota_exhausted",
    "rate_limited_429",  # last: adding it left the draws of the others unchanged
)

_Rate = Field(default=0.0, ge=0.0, le=1.0)


class FaultRates(BaseModel):
    """Per-request probabilities of each failure a real provider shows.

    One seeded draw per request picks at most one fault, so the rates must
    sum to at most 1. ``malformed_json`` only bites when the request asked
    for JSON output; otherwise that draw means "no fault".
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    error_500: float = _Rate
    error_503: float = _Rate
    overloaded_529: float = _Rate
    reset: float = _Rate
    stall: float = _Rate
    stream_cut: float = _Rate
    malformed_json: float = _Rate
    quota_exhausted: float = _Rate
    rate_limited_429: float = _Rate  # a 429 with Retry-After (pacing), not a quota
    stall_s: float = Field(default=30.0, ge=0.0)
    retry_after_s: float = Field(default=1.0, ge=0.0)

    @model_validator(mode="after")
    def _sum_at_most_one(self) -> FaultRates:
        if self.total() > 1.0 + 1e-9:
            raise ValueError(f"fault rates sum to {self.total():.3f}, more than 1")
        return self

    def total(self) -> float:
        return sum(self.rate(k) for k in FAULT_KINDS)

    def rate(self, kind: str) -> float:
        value: float = getattr(self, kind)
        return value


class SimProfile(BaseModel):
    """Everything that shapes how the simulated provider behaves.

    Latency follows the project's model: TTFT = ``ttft_base_s`` + input
    tokens × ``prefill_s_per_token``, then decode at a per-stream rate of
    ``min(decode_tps, aggregate_tps / decoding streams)``. ``slots`` requests
    are in service at once, the rest wait FIFO (at most ``max_queue`` of
    them, beyond that 529). Past ``contention_onset`` requests in service,
    each further one slows decode and prefill by ``contention`` (a fraction),
    which is what makes a "knee": total throughput flattens, then falls.

    ``prefix_cache_tokens`` > 0 turns on automatic prefix caching (an LRU of
    that many tokens in ``prefix_block_tokens`` blocks): cached prompt
    tokens cost no prefill and are reported as ``cached_tokens``.
    ``prefill_lanes`` bounds how many requests prefill at once (the others
    wait FIFO, as an engine's per-step token budget makes them); ``None``
    lets every request in a slot prefill independently.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "custom"
    ttft_base_s: float = Field(default=0.2, ge=0.0)
    prefill_s_per_token: float = Field(default=0.05e-3, ge=0.0)
    decode_tps: float = Field(default=50.0, gt=0.0)
    slots: int = Field(default=16, ge=1)
    aggregate_tps: float | None = Field(default=None, gt=0.0)
    contention: float = Field(default=0.0, ge=0.0)
    contention_onset: int = Field(default=0, ge=0)
    stream_overhead: float = Field(default=0.0, ge=0.0)
    max_queue: int | None = Field(default=None, ge=0)
    rpm: int | None = Field(default=None, ge=1)
    tpm: int | None = Field(default=None, ge=1)
    faults: FaultRates = FaultRates()
    fault_window: tuple[float, float] | None = None
    models: tuple[str, ...] = (DEFAULT_MODEL,)
    default_max_tokens: int = Field(default=256, ge=1)
    seed: int = 0
    prefix_cache_tokens: int = Field(default=0, ge=0)
    prefix_block_tokens: int = Field(default=16, ge=1)
    prefill_lanes: int | None = Field(default=None, ge=1)
    time_scale: float = Field(default=1.0, gt=0.0)
    min_event_interval_s: float = Field(default=0.01, ge=0.0)

    @model_validator(mode="after")
    def _check(self) -> SimProfile:
        if not self.models:
            raise ValueError("models must name at least one model")
        if self.fault_window is not None and self.fault_window[1] < self.fault_window[0]:
            raise ValueError("fault_window end is before its start")
        return self

    def with_overrides(self, **overrides: Any) -> SimProfile:  # Any: validated by pydantic
        """A validated copy with some fields replaced (``faults`` may be a dict)."""
        if not overrides:
            return self
        data = self.model_dump()
        faults = overrides.pop("faults", None)
        if isinstance(faults, FaultRates):
            faults = faults.model_dump()
        if faults is not None:
            data["faults"] = {**data["faults"], **dict(faults)}
        data.update(overrides)
        return _validate(data, f"profile {self.name!r}")


def _validate(data: dict[str, Any], where: str) -> SimProfile:
    try:
        return SimProfile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "profile"
        raise ConfigError(f"{where}: {loc}: {err['msg']}") from None


PROFILES: dict[str, SimProfile] = {
    p.name: p
    for p in (
        SimProfile(name="default"),
        SimProfile(
            name="fast",
            ttft_base_s=0.01,
            prefill_s_per_token=1e-6,
            decode_tps=2000.0,
            slots=64,
        ),
        SimProfile(
            name="knee",
            ttft_base_s=0.3,
            decode_tps=50.0,
            slots=32,
            aggregate_tps=500.0,
            contention=0.08,
            contention_onset=12,
        ),
        SimProfile(
            name="flaky",
            faults=FaultRates(
                error_500=0.02,
                error_503=0.02,
                overloaded_529=0.03,
                reset=0.02,
                stall=0.01,
                stream_cut=0.02,
                malformed_json=0.03,
                stall_s=30.0,
            ),
        ),
        SimProfile(name="ratelimited", rpm=60, tpm=20_000),
        # A large model behind a hosted API: about a second before any token,
        # prefill at ~5k tokens/s (a 7k-token prompt waits ~2.4 s for its
        # first token, the source's streamed demo), then 50 tokens/s per stream.
        SimProfile(name="hosted", ttft_base_s=1.0, prefill_s_per_token=0.2e-3, decode_tps=50.0),
        # A 7B-class model on one GPU (llama.cpp's server, vLLM): TTFT a few tenths of a
        # second plus prefill at ~2,500 tokens/s (a 4k-token prompt waits ~1.9 s), then
        # ~40 output tokens/s per stream, 8 requests served at once, the rest queued.
        SimProfile(
            name="7b",
            ttft_base_s=0.3,
            prefill_s_per_token=0.4e-3,
            decode_tps=40.0,
            slots=8,
            default_max_tokens=1024,
        ),
    )
}


def get_profile(name: str, **overrides: object) -> SimProfile:
    """The named profile, with ``overrides`` applied; unknown names raise UnknownProfile."""
    try:
        base = PROFILES[name]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise UnknownProfile(f"unknown simulator profile {name!r}; known: {known}") from None
    return base.with_overrides(**overrides)


def load_profile_file(path: str | Path) -> SimProfile:
    """Load a profile from TOML or JSON; ``extends = "name"`` starts from a named one."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read profile file {str(p)!r}: {exc.strerror}") from None
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(raw)
        else:
            data = tomllib.loads(raw.decode("utf-8"))
    except (json.JSONDecodeError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        msg = str(exc).splitlines()[0]
        raise ConfigError(f"profile file {str(p)!r} is not valid: {msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"profile file {str(p)!r} must hold a table/object")
    extends = data.pop("extends", None)
    data.setdefault("name", p.stem)
    if extends is None:
        return _validate(data, f"profile file {str(p)!r}")
    try:
        base = get_profile(str(extends))
    except UnknownProfile as exc:
        raise ConfigError(f"profile file {str(p)!r}: {exc}") from None
    try:
        return base.with_overrides(**data)
    except ConfigError as exc:
        raise ConfigError(f"profile file {str(p)!r}: {exc}") from None
