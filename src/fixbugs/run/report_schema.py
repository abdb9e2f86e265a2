"""The JSON report's shape, as pydantic models: one published schema for every run.

A run's report *is* a :class:`ReportModel` (built once, by
:func:`fixbugs.run.report.build_report`): ``fixbugs run --json`` dumps it,
the service's report route answers with it (its OpenAPI names it), the
eval reads reports back through it, and ``fixbugs schema`` prints
:func:`report_json_schema`, so a consumer can check a report without
reading our code. Models allow extra keys, so a new
field never breaks an old reader; the test suite checks that every key a
run writes is described here. ``version`` is bumped whenever a field
changes meaning (:data:`REPORT_VERSION`): 2 added ``verdict`` and
``validation.failed_checks``, and ``patch`` is set at ``passes_tests`` too; 3
made each event's ``data`` the object its ``kind`` carries.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fixbugs.repair.summary import RepairSummary
from fixbugs.repair.verdict import CheckKind, VerdictLevel
from fixbugs.run.progress import NO_DATA, DataOfKind, EventKind

# 2: ``verdict`` and ``validation.failed_checks`` (issue 44); a report without
# ``version`` is of version 1, whose ``validated`` meant "the tests passed";
# 3: each event's ``data`` is its kind's object (fixbugs.run.progress.DATA_OF): a
# ``reproduction`` event's says command, origin, confirmed and status (before, only some)
REPORT_VERSION = 3

__all__ = [
    "REPORT_VERSION",
    "CheckItem",
    "CostItem",
    "EnvironmentItem",
    "EvidenceItem",
    "OverfittingItem",
    "RankedFileItem",
    "RegionItem",
    "ReportModel",
    "ReproductionItem",
    "RootCauseItem",
    "StageFigures",
    "ValidationItem",
    "report_json_schema",
]


class _Open(BaseModel):
    # frozen: a report is built once, at the end of its run (fixbugs.run.report.build_report)
    model_config = ConfigDict(extra="allow", frozen=True)


class RankedFileItem(_Open):
    path: str
    score: float
    reasons: list[str]
    lines: list[tuple[int, int]] = Field(default_factory=list)


class RootCauseItem(_Open):
    path: str
    function: str | None = Field(None, description="enclosing function; null for module code")
    lines: tuple[int, int] = Field(description="first and last line, 1-based, inclusive")
    explanation: str
    origin: str = Field(description="model, sbfl or static")
    evidence: list[str] = Field(default_factory=list)


class RegionItem(_Open):
    path: str
    function: str | None = None
    lines: tuple[int, int]
    score: float
    reasons: list[str]


class CheckItem(_Open):
    """A check a passing fix does not meet (:class:`fixbugs.repair.verdict.FailedCheck`)."""

    kind: CheckKind
    why: str = Field(description="where and how, in one line")


class OverfittingItem(_Open):
    """A candidate that passed every validation stage but fails a check."""

    id: int
    path: str
    line: int = Field(description="first changed line of the old file")
    template: str
    why: str
    shape: str = Field(description="swallows, negates_condition or returns_constant")
    reason: str = Field(description="where and how, in one line")
    diff: str
    checks: list[CheckItem] = Field(default_factory=list, description="every check it fails")


class ValidationItem(_Open):
    summary: str
    tried: int
    rejected: list[str] = Field(default_factory=list)
    overfitting: list[OverfittingItem] = Field(
        default_factory=list,
        description="other candidates that pass the tests but fail a check (they swallow "
        "the exception, negate a whole condition, swap a condition's operand...)",
    )
    failed_checks: list[CheckItem] = Field(
        default_factory=list,
        description="verdict passes_tests: each check the leading fix does not meet",
    )
    oracle: str = Field(
        "repository_tests",
        description="what a fix's tests are: the repository's own, which FixBugs does not "
        "judge (a weak or hostile suite can pass a wrong patch); the checks are FixBugs' own",
    )


class ReproductionItem(_Open):
    command: str | None
    origin: str
    confirmed: bool = Field(description="the named tests ran and failed")
    summary: str
    status: str = Field("none", description="confirmed, passes, could_not_run or none")
    output_tail: str = ""
    script: str | None = Field(
        default=None,
        description="origin snippet: the report's own code that reproduced the bug, as a "
        "script (origin written: a script the judge model wrote for the report, held to what "
        "the report shows); ``command`` runs it as validation's fail-to-pass gate",
    )
    expected: str | None = Field(
        default=None,
        description="origin snippet: what the report says the code should print instead, "
        "which the gate requires; null: the gate only sees the failure gone, and a fix it "
        "passes is at most passes_tests (check weak_oracle)",
    )
    sbfl_skipped: str | None = Field(
        default=None,
        description="why SBFL gave no evidence on a reproduced bug, in one line "
        "(the root cause then stands on static evidence); null when it ran",
    )


class StageFigures(_Open):
    wall_s: float
    ttft_s: float | None = Field(None, description="first token of the stage's first streamed call")
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = Field(
        None,
        description="dollars its model calls cost at the endpoints' configured prices; "
        "null when no call of it had a price",
    )
    model_calls: int = 0
    tool_calls: int = 0
    attempts: int | None = Field(None, description="attempts of the stage's calls, retries in")
    model_attempts: int | None = Field(None, description="attempts of its model calls")
    failures: int = 0


class EvidenceItem(_Open):
    source: str
    text: str
    path: str | None = None
    line: int | None = None
    at: str | None = None


class EventItem(_Open):
    """A progress event (:class:`fixbugs.run.progress.ProgressEvent`): ``data`` is the
    object its ``kind`` carries, ``{}`` for a stage change or a note."""

    kind: EventKind
    stage: str
    at_s: float
    message: str
    data: DataOfKind = NO_DATA


class EnvironmentItem(_Open):
    """The interpreter that ran the tests, as it reported itself (fixbugs.pyenv.userenv.TestEnv)."""

    python: str
    source: str
    version: str
    prefix: str = ""
    pytest: str | None = None
    coverage: str | None = None
    coverage_overlay: str | None = None
    overlay_coverage: str | None = None


class CostItem(_Open):
    """The run's model spend against its budget (``--max-cost``, ``--max-tokens``)."""

    input_tokens: int
    output_tokens: int
    cost_usd: float | None = Field(
        description="at the endpoints' configured prices; null when no call had a price"
    )
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    reached: str | None = Field(
        None,
        description="the line said when the budget was reached (the model work ended there "
        "and the run went on from the static evidence); null when it was not",
    )
    refused_calls: int = Field(0, description="model calls not started: the budget was reached")
    cut: dict[str, int] = Field(
        default_factory=dict,
        description="the calls not started, by stage: a call starts only when its worst "
        "case (input tokens plus max output tokens, at the price) fits in what the budget "
        "has left beside the calls in flight",
    )


class ModelCalls(_Open):
    failed: int
    total: int


class ReportModel(_Open):
    """One run of ``fixbugs run``: the verdict, the localization, the evidence, the timing."""

    version: int = Field(default=1, description="the report's format; absent: 1")
    title: str
    ranked_files: list[RankedFileItem]
    root_cause: RootCauseItem | None
    suspicious_regions: list[RegionItem] = Field(default_factory=list)
    patch: str | None = Field(
        description="the leading fix's diff: verdict validated or passes_tests"
    )
    validated: bool = Field(description="verdict is validated: the only level that is a fix")
    verdict: VerdictLevel = Field(
        default=VerdictLevel.NO_FIX,
        description="validated (the tests and every check hold), passes_tests (the tests "
        "pass, a check in validation.failed_checks does not) or no_fix",
    )
    validation: ValidationItem
    reproduction: ReproductionItem
    first_hypothesis_s: float | None
    total_s: float
    stages: dict[str, StageFigures]
    evidence: list[EvidenceItem] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    repair: RepairSummary | None = None
    events: list[EventItem] = Field(default_factory=list)
    calls: list[dict[str, Any]] = Field(default_factory=list)
    critical_path: list[str] = Field(default_factory=list)
    degraded: bool = Field(False, description="the model failed during the run (exit 3)")
    model_calls: ModelCalls | None = None
    cost: CostItem | None = Field(
        default=None, description="the run's model tokens, dollars and budget"
    )
    verdict_head: str | None = None
    environment: EnvironmentItem | None = Field(
        None, description="the interpreter and pytest that ran the tests"
    )

    @model_validator(mode="before")
    @classmethod
    def _old_verdict(cls, data: Any) -> Any:
        """A version 1 report has no ``verdict``: its ``validated`` stands for it."""
        if isinstance(data, dict) and "verdict" not in data and data.get("validated") is True:
            return {**data, "verdict": VerdictLevel.VALIDATED}
        return data

    @model_validator(mode="before")
    @classmethod
    def _old_events(cls, data: Any) -> Any:
        """Before version 3 a ``reproduction`` event said only some of the reproduction
        (none of it when nothing ran): the report's ``reproduction`` says the rest."""
        if not isinstance(data, dict) or data.get("version", 1) not in (1, 2):
            return data
        said, events = data.get("reproduction"), data.get("events", [])
        if not isinstance(said, dict) or not isinstance(events, list):
            return data
        whole = {k: said.get(k) for k in ("command", "origin", "confirmed", "status")}
        whole["status"] = whole["status"] or "none"  # absent from a version 1 report
        return {**data, "events": [_whole_reproduction(e, whole) for e in events]}


def _whole_reproduction(event: Any, whole: dict[str, Any]) -> Any:
    if not isinstance(event, dict) or event.get("kind") != "reproduction":
        return event
    said = event.get("data")
    return {**event, "data": {**whole, **(said if isinstance(said, dict) else {})}}


def report_json_schema() -> dict[str, Any]:
    """The JSON Schema of the report ``fixbugs run --json`` writes."""
    schema = ReportModel.model_json_schema()
    schema["$id"] = "fixbugs-report"
    return schema
