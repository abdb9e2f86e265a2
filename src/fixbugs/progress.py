"""Progress events: what a person watching a run sees, as it happens.

Stages emit events into one sink; the CLI renders them live, the HTTP API
streams them as server-sent events, and the report keeps them as a timeline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["EventKind", "EventSink", "ProgressEvent", "collecting_sink"]

EventKind = Literal[
    "run_started",
    "stage_started",
    "stage_finished",
    "hypothesis",
    "ranked_files",
    "evidence",
    "reproduction",
    "root_cause",
    "candidate",
    "validated",
    "note",
    "run_finished",
]


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    kind: EventKind
    stage: str
    at_s: float  # seconds since the run started
    message: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


EventSink = Callable[[ProgressEvent], None]


def collecting_sink() -> tuple[EventSink, list[ProgressEvent]]:
    """A sink that keeps every event in a list (tests, reports)."""
    events: list[ProgressEvent] = []
    return events.append, events
