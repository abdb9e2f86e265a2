"""``BugRun``: one typed record of what a bug's run has found so far, stage by stage.

Each stage returns its own result (:mod:`fixbugs.stages`); the driver
composes the record from them, one typed ``with_*`` method per result
(:meth:`BugRun.with_reproduction`, ...: the one place that names the
record's fields for an update), and hands it to the next stage as that
stage's prior. The staged queue
hands a bug from one stage to the next as this record's JSON, so a worker
decodes only data, never code: every field is a pydantic model, a frozen
dataclass of the agent's own (validated field by field) or a JSON value.

The record is grouped by the stage that produced it: :class:`Analysis`
(static analysis, the log digest and the model's file relevance), the
:class:`Reproduction`, :class:`Sbfl`, the :class:`Diagnosis` (the ranked
files, regions and :class:`RootCause`), :class:`FixProposal` and the
:class:`Validation` with the repair summary; then what the run's journal
and metrics recorder kept (events, notes, calls) and the stages' walls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentrt.flow import SpendSnapshot
from agentrt.metrics import CallRecord
from fixbugs.localize.evidence import FileEvidence
from fixbugs.localize.rank import RankedFile
from fixbugs.localize.regions import Region
from fixbugs.localize.traceback import ParsedFailure
from fixbugs.repair.ranking import RepairCandidate
from fixbugs.repair.summary import RepairSummary
from fixbugs.repair.verdict import FailedCheck, VerdictLevel
from fixbugs.run.progress import ProgressEvent, ReproductionData, RootCauseData

__all__ = [
    "RECORD_VERSION",
    "Analysis",
    "BugRun",
    "Diagnosis",
    "EvidenceLine",
    "FixProposal",
    "ReproStatus",
    "Reproduction",
    "RootCause",
    "Sbfl",
    "Validation",
]

# bumped whenever a field changes meaning; a worker refuses a record of another version
# (7: ``Validation.validated`` became its ``level`` with the ``failed`` checks, issue 44;
# 9: ``Reproduction.crash``, the reproduction's own traceback as file evidence;
# 10: each progress event's ``data`` is its kind's object, fixbugs.run.progress.DATA_OF)
RECORD_VERSION: Literal[10] = 10


@dataclass(frozen=True, slots=True)
class EvidenceLine:
    """One line of the bug's evidence with its provenance, as the report lists it.

    Not :class:`~fixbugs.localize.evidence.FileEvidence` (a reason to suspect a file,
    which ranking merges) nor agentrt's ``Evidence`` (a log or trace finding).
    """

    source: Literal["report", "traceback", "log", "trace", "test", "model"]
    text: str
    path: str | None = None
    line: int | None = None
    at: str | None = None  # timestamp or span id, when known


ReproStatus = Literal["confirmed", "passes", "could_not_run", "none"]


@dataclass(frozen=True, slots=True)
class Reproduction:
    """Whether the bug was seen to fail: one ``status``.

    ``confirmed`` only when the named tests were collected, ran, and failed
    or errored in the test itself (:func:`fixbugs.pyenv.testverdict.classify_run`),
    or the report's own snippet failed as the report shows
    (:func:`fixbugs.stages.snippet.judge_snippet_run`);
    "could not run" (collection or import errors, usage errors, no tests,
    no interpreter or no pytest) is never a reproduction.
    """

    command: str | None
    origin: Literal["given", "report", "written", "snippet", "discovered", "none"]
    status: ReproStatus
    summary: str
    baseline: Mapping[str, str] = field(default_factory=dict)  # test id -> outcome
    verbose_command: str | None = None
    output_tail: str = ""
    suite_command: str | None = None  # the whole test folder, for the last gate
    # origin "snippet": the report's code that reproduced the bug, as a script; ``command``
    # is then its self-contained gate (fixbugs.stages.snippet.gate_command), which exits 0
    # once the script stops failing
    script: str | None = None
    # origin "snippet": what the report says the code should print instead (Snippet.expected),
    # which the gate then requires; None: the gate only requires the failure to be gone
    expected: str | None = None
    # the failing tests' sections of the run (fixbugs.pyenv.testoutput.failure_excerpt):
    # the traceback and the failed assertion, which the repair's hints read
    failure_text: str = ""
    # origin "snippet": the project frames of the traceback the reproducing run printed
    # (fixbugs.localize.locate.crash_evidence): where the bug ran and failed, on this tree
    crash: tuple[FileEvidence, ...] = ()

    @property
    def confirmed(self) -> bool:
        """The named tests ran and failed on the current code."""
        return self.status == "confirmed"

    def event_data(self) -> ReproductionData:
        """What the ``reproduction`` event says of it."""
        return ReproductionData(self.command, self.origin, self.confirmed, self.status)


@dataclass(frozen=True, slots=True)
class RootCause:
    """The region held to cause the bug, why, and which signal chose it."""

    path: str
    start: int
    end: int
    explanation: str
    origin: Literal["model", "sbfl", "static"]
    evidence: tuple[str, ...] = ()
    function: str | None = None  # the enclosing function, None for module-level code

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "function": self.function,
            "lines": [self.start, self.end],
            "explanation": self.explanation,
            "origin": self.origin,
            "evidence": list(self.evidence),
        }

    def event_data(self) -> RootCauseData:
        """What the ``root_cause`` event says of it: the report's ``root_cause``."""
        return RootCauseData(
            self.path,
            self.function,
            (self.start, self.end),
            self.explanation,
            self.origin,
            self.evidence,
        )


@dataclass(frozen=True, slots=True)
class Validation:
    """The validation stage: the verdict, the fix it is about, and what was run.

    ``level`` (:class:`~fixbugs.repair.verdict.VerdictLevel`): ``validated``
    when ``candidate`` passed the tests and every check; ``passes_tests``
    when it passed the tests but not the checks in ``failed`` (one line
    each); ``no_fix`` when no candidate passed (``candidate`` is None).
    ``overfitting``: the other candidates that passed the tests but fail a
    check (swallow the exception, negate a whole condition, ...): listed apart.
    """

    level: VerdictLevel
    candidate: RepairCandidate | None  # the leading fix (validated or passing the tests)
    tried: int
    summary: str
    rejected: tuple[str, ...] = ()
    repair: RepairSummary | None = None  # the report's ``repair`` object as it is
    overfitting: tuple[RepairCandidate, ...] = ()
    failed: tuple[FailedCheck, ...] = ()  # the checks ``candidate`` does not meet

    @property
    def validated(self) -> bool:
        """Only ``validated`` is a validated fix: printed, counted and applied as one."""
        return self.level == VerdictLevel.VALIDATED


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_inf_nan="strings")


class Analysis(_Record):
    """What was known before any test ran: the analysis and file relevance stages."""

    evidence: tuple[EvidenceLine, ...] = ()  # the bug's evidence with its provenance
    log_digest: str = ""  # reduced log evidence, rendered for prompts
    failure: ParsedFailure | None = None  # the parsed traceback and failing tests
    ranked: tuple[RankedFile, ...] = ()  # the files ranked on the static signals
    first_hypothesis_s: float | None = None
    static: tuple[FileEvidence, ...] = ()  # static analysis' file evidence
    relevance: tuple[FileEvidence, ...] = ()  # the model's file relevance

    def with_relevance(self, relevance: tuple[FileEvidence, ...]) -> Analysis:
        """This analysis with the model's file relevance beside it."""
        return self.model_copy(update={"relevance": relevance})


class Sbfl(_Record):
    """Spectrum-based fault localization, from the reproduction's coverage."""

    suspicious: dict[str, tuple[tuple[int, int, float], ...]] = Field(default_factory=dict)
    # every line a failing test ran, as runs of lines with one score: (first, last, score);
    # ``suspicious`` keeps each file's top ranges only, a repair may look further
    spectrum: dict[str, tuple[tuple[int, int, float], ...]] = Field(default_factory=dict)
    evidence: tuple[FileEvidence, ...] = ()
    skipped: str | None = None  # why SBFL gave nothing on a reproduced bug, in one line


class Diagnosis(_Record):
    """The root-cause stage: the files ranked on all evidence, the regions weighed, the choice."""

    ranked: tuple[RankedFile, ...] = ()  # static ranking, re-ranked with SBFL and relevance
    regions: tuple[Region, ...] = ()  # top suspicious regions, best first
    root_cause: RootCause | None = None

    def with_root_cause(self, root_cause: RootCause | None) -> Diagnosis:
        """The same ranking and regions, another chosen root cause (a validated fix moved it)."""
        return self.model_copy(update={"root_cause": root_cause})


class FixProposal(_Record):
    """The fix stage: the ranked candidates (best first) that validation runs, by id."""

    candidates: tuple[RepairCandidate, ...] = ()


class BugRun(_Record):
    """Everything later stages read, after some stage of one bug.

    A stage not run yet is its default (``None`` where the report says
    "not run"); ``events``, ``notes`` and ``records`` are what the run's
    journal and metrics recorder held when the record was taken.
    """

    version: Literal[10] = RECORD_VERSION
    started: float
    analysis: Analysis = Analysis()
    reproduction: Reproduction | None = None
    sbfl: Sbfl = Sbfl()
    diagnosis: Diagnosis | None = None
    fix: FixProposal = FixProposal()
    validation: Validation | None = None
    events: tuple[ProgressEvent, ...] = ()
    notes: tuple[str, ...] = ()
    records: tuple[CallRecord, ...] = ()  # model and tool calls so far
    spend: SpendSnapshot | None = None  # the model spend so far, per stage, and its budget
    walls: dict[str, float] = Field(default_factory=dict)  # agent stage -> seconds

    @property
    def ranked(self) -> tuple[RankedFile, ...]:
        """The run's file ranking now: the root cause's, else the static analysis'."""
        return self.diagnosis.ranked if self.diagnosis is not None else self.analysis.ranked

    @property
    def root_cause(self) -> RootCause | None:
        return self.diagnosis.root_cause if self.diagnosis is not None else None

    @property
    def regions(self) -> tuple[Region, ...]:
        return self.diagnosis.regions if self.diagnosis is not None else ()

    def file_evidence(self) -> list[FileEvidence]:
        """All file evidence so far, as the root cause ranks it: static, relevance, SBFL
        and the reproduction's crash."""
        a = self.analysis
        crash = self.reproduction.crash if self.reproduction is not None else ()
        return [*a.static, *a.relevance, *self.sbfl.evidence, *crash]

    # The record grows one stage's result at a time, through these typed methods
    # only: the one place that names BugRun's fields for an update.

    def with_relevance(self, relevance: tuple[FileEvidence, ...]) -> BugRun:
        return self.model_copy(update={"analysis": self.analysis.with_relevance(relevance)})

    def with_reproduction(self, reproduction: Reproduction | None, sbfl: Sbfl) -> BugRun:
        return self.model_copy(update={"reproduction": reproduction, "sbfl": sbfl})

    def with_diagnosis(self, diagnosis: Diagnosis) -> BugRun:
        return self.model_copy(update={"diagnosis": diagnosis})

    def with_fix(self, fix: FixProposal) -> BugRun:
        return self.model_copy(update={"fix": fix})

    def with_validation(self, validation: Validation, diagnosis: Diagnosis | None) -> BugRun:
        """The validation's result, and the diagnosis as the validated fix left it."""
        return self.model_copy(update={"validation": validation, "diagnosis": diagnosis})

    def with_walls(self, walls: Mapping[str, float]) -> BugRun:
        return self.model_copy(update={"walls": dict(walls)})

    def with_journal(
        self,
        events: tuple[ProgressEvent, ...],
        notes: tuple[str, ...],
        records: tuple[CallRecord, ...],
        spend: SpendSnapshot | None,
    ) -> BugRun:
        """The record with what the run's journal, recorder and spend budget hold now."""
        return self.model_copy(
            update={"events": events, "notes": notes, "records": records, "spend": spend}
        )
