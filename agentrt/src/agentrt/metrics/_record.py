"""One record per model or tool call: the unit every figure is built from."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from agentrt._json import JsonValue

__all__ = ["CallKind", "CallRecord", "Outcome"]

CallKind = Literal["model", "tool"]
Outcome = Literal["ok", "error", "cancelled"]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What one call cost, as its caller saw it.

    Times are seconds on the recorder's clock; ``started_at`` is relative to
    the recorder's creation so a run's records line up on one timeline (a
    Gantt chart needs nothing else). ``attempts`` counts every request that
    went out for this call, retries included (1 for a tool call).

    Rates: ``decode_tps`` is the decode rate measured from a token stream
    (output tokens after the first, over the time after the first): the
    client's stream, or the backend's own (the embedded llama.cpp model);
    it is ``None`` for a non-streamed HTTP call, since nothing measured it.
    ``output_tps`` is output tokens over the last attempt's time from
    sending to the end, TTFT included: what the caller got, not how fast
    the model decodes.
    """

    stage: str
    kind: CallKind
    name: str
    started_at: float
    wall_s: float
    queue_wait_s: float = 0.0
    ttft_s: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    decode_tps: float | None = None
    output_tps: float | None = None
    attempts: int = 1
    outcome: Outcome = "ok"
    error: str | None = None
    streamed: bool = False

    @property
    def ended_at(self) -> float:
        return self.started_at + self.wall_s

    def to_dict(self) -> dict[str, JsonValue]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallRecord:  # Any: loaded JSON
        data = dict(data)
        legacy = data.pop("tokens_per_s", None)
        if legacy is not None:
            # before the rename one field held both; only a stream measured decoding
            key = "decode_tps" if data.get("streamed") else "output_tps"
            data.setdefault(key, legacy)
        return cls(**data)
