"""Collects call records and aggregates them per stage.

The recorder in force is found through a context variable, so a model client
deep inside a scatter-gather records into the run's recorder without every
layer passing it along; :func:`stage` names the stage the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agentrt._clock import Clock, SystemClock
from agentrt._json import JsonObject, JsonValue
from agentrt.metrics._record import CallRecord, Outcome

__all__ = [
    "MetricsRecorder",
    "StageStats",
    "current_recorder",
    "current_stage",
    "percentile",
    "stage",
    "summarize",
]

_recorder: contextvars.ContextVar[MetricsRecorder | None] = contextvars.ContextVar(
    "agentrt_recorder", default=None
)
_stage: contextvars.ContextVar[str] = contextvars.ContextVar("agentrt_stage", default="default")


def current_recorder() -> MetricsRecorder | None:
    return _recorder.get()


def current_stage() -> str:
    return _stage.get()


@contextlib.contextmanager
def stage(name: str) -> Iterator[None]:
    """Attribute the calls made inside this block to stage ``name``."""
    token = _stage.set(name)
    try:
        yield
    finally:
        _stage.reset(token)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in [0, 100]); None for no values."""
    if not values:
        return None
    xs = sorted(values)
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


@dataclass(frozen=True, slots=True)
class StageStats:
    """Aggregates of one stage's calls.

    Counts: ``calls`` is every record (model and tool calls);
    ``model_calls`` the model calls, ``model_attempts`` the requests they
    sent (retries included), ``tool_calls`` the tool calls (which send no
    model request). ``failures`` and ``failure_rate`` count calls that
    ended in an error; ``retry_rate`` is extra model attempts per model
    call.

    Rates: ``throughput_tps`` is the stage's aggregate output rate (all
    output tokens over the stage's span on the timeline), the figure that
    shows whether fan-out helped. ``decode_tps_p50`` is the median decode
    rate measured from streamed calls (``None`` when none was streamed).
    ``output_tps_p50`` is the median per-call output rate, TTFT included.
    """

    stage: str
    calls: int
    model_calls: int
    model_attempts: int
    tool_calls: int
    failures: int
    failure_rate: float
    retry_rate: float
    span_s: float
    wall_p50_s: float | None
    wall_p95_s: float | None
    ttft_p50_s: float | None
    ttft_p95_s: float | None
    queue_wait_p95_s: float | None
    input_tokens: int
    output_tokens: int
    throughput_tps: float | None
    decode_tps_p50: float | None
    output_tps_p50: float | None


def summarize(name: str, records: Sequence[CallRecord]) -> StageStats:
    walls = [r.wall_s for r in records]
    ttfts = [r.ttft_s for r in records if r.ttft_s is not None]
    model = [r for r in records if r.kind == "model"]
    decode = [r.decode_tps for r in model if r.decode_tps is not None]
    output = [r.output_tps for r in model if r.output_tps is not None]
    failures = sum(1 for r in records if r.outcome == "error")
    attempts = sum(r.attempts for r in model)
    out = sum(r.output_tokens for r in records)
    span = (max(r.ended_at for r in records) - min(r.started_at for r in records)) if records else 0
    n = len(records)
    m = len(model)
    return StageStats(
        stage=name,
        calls=n,
        model_calls=m,
        model_attempts=attempts,
        tool_calls=n - m,
        failures=failures,
        failure_rate=failures / n if n else 0.0,
        retry_rate=(attempts - m) / m if m else 0.0,
        span_s=span,
        wall_p50_s=percentile(walls, 50),
        wall_p95_s=percentile(walls, 95),
        ttft_p50_s=percentile(ttfts, 50),
        ttft_p95_s=percentile(ttfts, 95),
        queue_wait_p95_s=percentile([r.queue_wait_s for r in records], 95),
        input_tokens=sum(r.input_tokens for r in records),
        output_tokens=out,
        throughput_tps=out / span if span > 0 and out else None,
        decode_tps_p50=percentile(decode, 50),
        output_tps_p50=percentile(output, 50),
    )


class MetricsRecorder:
    """Keeps every call record of a run; aggregates and exports them."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock: Clock = clock or SystemClock()
        self.origin = self.clock.now()
        self._records: list[CallRecord] = []

    # -- collecting ---------------------------------------------------------
    @contextlib.contextmanager
    def activate(self) -> Iterator[MetricsRecorder]:
        """Make this the recorder that calls in this context record into."""
        token = _recorder.set(self)
        try:
            yield self
        finally:
            _recorder.reset(token)

    def relative(self, t: float) -> float:
        return t - self.origin

    def add(self, record: CallRecord) -> None:
        self._records.append(record)

    @contextlib.contextmanager
    def tool_call(self, name: str, *, stage_name: str | None = None) -> Iterator[None]:
        """Time a tool call (any non-model work) as a record of kind "tool"."""
        start = self.clock.now()
        outcome: Outcome = "ok"
        error: str | None = None
        try:
            yield
        except BaseException as exc:
            outcome = (
                "cancelled"
                if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt)
                else "error"
            )
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self.add(
                CallRecord(
                    stage=stage_name or current_stage(),
                    kind="tool",
                    name=name,
                    started_at=self.relative(start),
                    wall_s=self.clock.now() - start,
                    outcome=outcome,
                    error=error,
                )
            )

    # -- reading ------------------------------------------------------------
    @property
    def records(self) -> list[CallRecord]:
        return list(self._records)

    def stages(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self._records:
            seen.setdefault(r.stage, None)
        return list(seen)

    def by_stage(self) -> dict[str, StageStats]:
        return {s: summarize(s, [r for r in self._records if r.stage == s]) for s in self.stages()}

    def to_json_obj(self) -> dict[str, JsonValue]:
        return {
            "calls": [r.to_dict() for r in self._records],
            "stages": {k: asdict(v) for k, v in self.by_stage().items()},
        }

    def write_json(self, path: str | Path, extra: JsonObject | None = None) -> None:
        obj = self.to_json_obj()
        if extra:
            obj.update(extra)
        Path(path).write_text(json.dumps(obj, indent=2) + "\n")

    @classmethod
    def from_json_obj(cls, obj: dict[str, Any]) -> MetricsRecorder:  # Any: loaded JSON
        rec = cls()
        rec.origin = 0.0
        for c in obj.get("calls", []):
            rec.add(CallRecord.from_dict(c))
        return rec
