"""One record per model or tool call: the unit every figure is built from."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

__all__ = ["CallKind", "CallRecord", "Outcome"]

CallKind = Literal["model", "tool"]
Outcome = Literal["ok", "error", "cancelled"]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What one call cost, as its caller saw it.

    Times are seconds on the recorder's clock; ``started_at`` is relative to
    the recorder's creation so a run's records line up on one timeline (a
    Gantt chart needs nothing else). ``attempts`` counts every request that
    went out for this call, retries included.
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
    tokens_per_s: float | None = None
    attempts: int = 1
    outcome: Outcome = "ok"
    error: str | None = None
    streamed: bool = False

    @property
    def ended_at(self) -> float:
        return self.started_at + self.wall_s

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallRecord:
        return cls(**data)
