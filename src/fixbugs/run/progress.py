"""Progress events: what a person watching a run sees, as it happens.

Stages emit events into the run's :class:`Journal`, which hands each to one
sink: the CLI renders them live, the HTTP API streams them as server-sent
events. The journal keeps them (and the run's notes) in order, as the
metrics recorder keeps the calls, and they end up in the run's record and
its report as a timeline.

Each kind of event carries one typed ``data`` (:data:`DATA_OF`): the ranked
files, the first hypothesis, a validated fix... A reader narrows on the
data's class, never indexes a dict by string; an event whose data is not
its kind's is refused when it is made. On the wire (SSE, the report's
``events``) the data is its fields as a JSON object, ``{}`` for
:class:`NoData`; reading a record or a report back builds the kind's class
again (:func:`data_of_kind`).

Internal stages report in whole events. The root-cause judgment is the one
thing a person reads word by word, so it streams: ``judgment`` events carry
the model's text pieces as they arrive (:attr:`JudgmentData.delta`) and a
last one with :attr:`JudgmentData.done`; :class:`JudgmentPrinter` turns them
into terminal output without a line per piece.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, TypeAdapter, ValidationInfo

from agentrt import Clock
from fixbugs.repair.ranking import OverfitRisk
from fixbugs.repair.verdict import CheckKind

__all__ = [
    "DATA_OF",
    "NO_DATA",
    "CandidateData",
    "DataOfKind",
    "EventData",
    "EventKind",
    "EventSink",
    "HypothesisData",
    "Journal",
    "JudgmentData",
    "JudgmentPrinter",
    "LogFindingsData",
    "NoData",
    "ProgressEvent",
    "RankedFileData",
    "RankedFilesData",
    "ReproductionData",
    "RootCauseData",
    "RunFinishedData",
    "ValidatedData",
    "collecting_sink",
    "data_of_kind",
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
class NoData:
    """The data of an event whose message says it all: a stage started, a note."""


NO_DATA = NoData()


@dataclass(frozen=True, slots=True)
class HypothesisData:
    """The analysis's top file, before any test runs, and why."""

    path: str
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RankedFileData:
    path: str
    score: float  # rounded to 3 places
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RankedFilesData:
    """The top of a file ranking (the analysis's, then the root cause's)."""

    files: tuple[RankedFileData, ...]


@dataclass(frozen=True, slots=True)
class LogFindingsData:
    """The log digest's findings (kind ``evidence``): the services they came from."""

    services: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReproductionData:
    """What the reproduction ran (None: nothing to run) and what it saw."""

    command: str | None
    origin: str  # as Reproduction.origin
    confirmed: bool
    status: str  # as Reproduction.status


@dataclass(frozen=True, slots=True)
class RootCauseData:
    """The region held to cause the bug (as the report's ``root_cause``)."""

    path: str
    function: str | None
    lines: tuple[int, int]
    explanation: str
    origin: str  # as RootCause.origin: model, sbfl or static
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class JudgmentData:
    """A piece of the streamed judgment, or (``done``) its end."""

    delta: str = ""
    done: bool = False


@dataclass(frozen=True, slots=True)
class CandidateData:
    """A candidate fix that is not validated: rejected (neither field), or it passes the
    tests but a shape check does not hold (its diff, and which check)."""

    diff: str | None = None
    shape: CheckKind | None = None


@dataclass(frozen=True, slots=True)
class ValidatedData:
    diff: str
    overfit_risk: OverfitRisk


@dataclass(frozen=True, slots=True)
class RunFinishedData:
    validated: bool  # the report's verdict is ``validated``


EventData = (
    NoData
    | HypothesisData
    | RankedFilesData
    | LogFindingsData
    | ReproductionData
    | RootCauseData
    | JudgmentData
    | CandidateData
    | ValidatedData
    | RunFinishedData
)

# the one class of data each kind of event carries
DATA_OF: Mapping[EventKind, type[EventData]] = {
    "run_started": NoData,
    "stage_started": NoData,
    "stage_finished": NoData,
    "hypothesis": HypothesisData,
    "ranked_files": RankedFilesData,
    "evidence": LogFindingsData,
    "reproduction": ReproductionData,
    "root_cause": RootCauseData,
    "judgment": JudgmentData,
    "candidate": CandidateData,
    "validated": ValidatedData,
    "note": NoData,
    "run_finished": RunFinishedData,
}
_ADAPTERS: dict[type[EventData], TypeAdapter[EventData]] = {
    cls: TypeAdapter(cls) for cls in set(DATA_OF.values())
}
_READERS: dict[str, TypeAdapter[EventData]] = {k: _ADAPTERS[c] for k, c in DATA_OF.items()}


def data_of_kind(value: object, info: ValidationInfo) -> object:
    """An event's JSON ``data`` as its kind's class (pydantic, reading a record or a
    report back: the JSON does not say which class, the event's ``kind`` does)."""
    if not isinstance(value, Mapping):
        return value
    kind = info.data.get("kind")
    reader = _READERS.get(kind) if isinstance(kind, str) else None
    if reader is None:
        raise ValueError(f"no event data for kind {kind!r}")
    return reader.validate_python(value)


# an event's data field, for pydantic: read back as the class its ``kind`` names
DataOfKind = Annotated[EventData, BeforeValidator(data_of_kind)]


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    kind: EventKind
    stage: str
    at_s: float  # seconds since the run started
    message: str
    data: DataOfKind = NO_DATA

    def __post_init__(self) -> None:
        want = DATA_OF[self.kind]
        if type(self.data) is not want:
            raise TypeError(
                f"a {self.kind} event carries {want.__name__}, not {type(self.data).__name__}"
            )

    def to_dict(self) -> dict[str, Any]:
        """The event as JSON types: what SSE sends and the report's ``events`` hold."""
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

    def emit(
        self, kind: EventKind, stage: str, message: str, data: EventData = NO_DATA
    ) -> ProgressEvent:
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
        if not isinstance(ev.data, JudgmentData):
            return None
        if ev.data.done:
            return self.close() or ""
        if not self.open:
            self.open = True
            return self.lead + ev.data.delta.lstrip()
        return ev.data.delta

    def close(self) -> str | None:
        """A newline if a judgment line is open (and now closed), else None."""
        if not self.open:
            return None
        self.open = False
        return "\n"
