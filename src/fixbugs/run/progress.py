"""Progress events: what a person watching a run sees, as it happens.

Stages emit events into the run's :class:`Journal`, which hands each to one
sink: the CLI renders them live, the HTTP API streams them as server-sent
events. The journal keeps them (and the run's notes) in order, as the
metrics recorder keeps the calls, and they end up in the run's record and
its report as a timeline.

Internal stages report in whole events. The root-cause judgment is the one
thing a person reads word by word, so it streams: ``judgment`` events carry
the model's text pieces as they arrive (``data["delta"]``) and a last one
with ``data["done"]``; :class:`JudgmentPrinter` turns them into terminal
output without a line per piece.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from agentrt import Clock

__all__ = [
    "EventKind",
    "EventSink",
    "Journal",
    "JudgmentPrinter",
    "ProgressEvent",
    "collecting_sink",
]

EventKind = Literal[
    "run_started",
    "stage_started",
    "stage_finished",
    "hypothesis",
    "ranked_files",
    "evidence",
    "reproduction",
    "root_cause",
    "judgment",  # a piece of the streamed root-cause explanation
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


class Journal:
    """A run's progress events and notes, in order, each event sent to the sink as it comes.

    Times are seconds since ``started`` on the run's clock. The staged
    driver resumes a bug's journal in another process from the record's
    ``events`` and ``notes`` (and its ``started``), so a run's timeline is
    one whichever worker ran each stage.
    """

    def __init__(
        self,
        clock: Clock,
        sink: EventSink,
        *,
        started: float | None = None,
        events: Iterable[ProgressEvent] = (),
        notes: Iterable[str] = (),
    ) -> None:
        self.clock = clock
        self._sink = sink
        self.started = clock.now() if started is None else started
        self.events: list[ProgressEvent] = list(events)
        self.notes: list[str] = list(notes)

    def elapsed(self) -> float:
        return self.clock.now() - self.started

    def emit(self, kind: EventKind, stage: str, message: str, **data: Any) -> ProgressEvent:
        """Record and send one event; returned so a caller can quote its time."""
        ev = ProgressEvent(kind, stage, round(self.elapsed(), 3), message, data)
        self.events.append(ev)
        self._sink(ev)
        return ev

    def note(self, stage: str, message: str) -> None:
        """A line of the report's notes, also sent as a ``note`` event."""
        self.notes.append(message)
        self.emit("note", stage, message)


class JudgmentPrinter:
    """What a terminal should write for a streamed judgment (sans-IO).

    ``feed`` returns the text to write for one event, or None when the event
    is not part of a judgment: the first piece opens a line with ``lead``,
    later pieces continue it, ``done`` closes it. Any other event arriving
    while a judgment is open closes the line first (``close``).
    """

    def __init__(self, lead: str = "") -> None:
        self.lead = lead
        self.open = False

    def feed(self, ev: ProgressEvent) -> str | None:
        if ev.kind != "judgment":
            return None
        if ev.data.get("done"):
            return self.close() or ""
        delta = str(ev.data.get("delta", ""))
        if not self.open:
            self.open = True
            return self.lead + delta.lstrip()
        return delta

    def close(self) -> str | None:
        """A newline if a judgment line is open (and now closed), else None."""
        if not self.open:
            return None
        self.open = False
        return "\n"
