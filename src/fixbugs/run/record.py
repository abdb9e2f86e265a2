"""``BugRun``: one typed record of what a bug's run has found so far, stage by stage.

A run's stages write their results into the
:class:`~fixbugs.run.context.RunContext`; :func:`record_of` reads them out
into a :class:`BugRun` and :func:`restore_into` puts one back into a fresh
context (same inputs, this process's models and sandbox). The staged queue
hands a bug from one stage to the next as this record's JSON, so a worker
decodes only data, never code: every field is a pydantic model, a frozen
dataclass of the agent's own (validated field by field) or a JSON value.

The record is grouped by the stage that produced it: :class:`Analysis`
(static analysis, the log digest and the model's file relevance), the
:class:`~fixbugs.run.context.Reproduction`, :class:`Sbfl`, the root cause
with its ranked files and regions, :class:`FixProposal` and the
:class:`~fixbugs.run.context.Validation` with the repair summary.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentrt.metrics import CallRecord
from fixbugs.localize.evidence import Evidence as FileEvidence
from fixbugs.localize.rank import RankedFile
from fixbugs.localize.regions import Region
from fixbugs.localize.traceback import ParsedFailure
from fixbugs.repair.ranking import RepairCandidate
from fixbugs.run.context import Evidence, Reproduction, RootCause, RunContext, Validation
from fixbugs.run.progress import ProgressEvent

__all__ = [
    "RECORD_VERSION",
    "Analysis",
    "BugRun",
    "FixProposal",
    "Sbfl",
    "record_of",
    "restore_into",
]

# bumped whenever a field changes meaning; a worker refuses a record of another version
RECORD_VERSION: Literal[4] = 4


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_inf_nan="strings")


class Analysis(_Record):
    """What was known before any test ran: the analysis and file relevance stages."""

    evidence: tuple[Evidence, ...] = ()  # the bug's evidence with its provenance
    log_digest: str = ""  # reduced log evidence, rendered for prompts
    failure: ParsedFailure | None = None  # the parsed traceback and failing tests
    static_ranking: tuple[RankedFile, ...] = ()
    first_hypothesis_s: float | None = None
    static: tuple[FileEvidence, ...] = ()  # static analysis' file evidence
    relevance: tuple[FileEvidence, ...] = ()  # the model's file relevance


class Sbfl(_Record):
    """Spectrum-based fault localization, from the reproduction's coverage."""

    suspicious: dict[str, tuple[tuple[int, int, float], ...]] = Field(default_factory=dict)
    evidence: tuple[FileEvidence, ...] = ()
    suite_baseline: dict[str, str] | None = None  # test id -> outcome, filled on first use


class FixProposal(_Record):
    """The fix stage: the ranked candidates (best first) that validation runs, by id."""

    candidates: tuple[RepairCandidate, ...] = ()


class BugRun(_Record):
    """Everything later stages read, after some stage of one bug."""

    version: Literal[4] = RECORD_VERSION
    started: float
    analysis: Analysis = Analysis()
    reproduction: Reproduction | None = None
    sbfl: Sbfl = Sbfl()
    ranked: tuple[RankedFile, ...] = ()  # static ranking, re-ranked with SBFL at the root cause
    root_cause: RootCause | None = None
    regions: tuple[Region, ...] = ()  # top suspicious regions
    fix: FixProposal = FixProposal()
    validation: Validation | None = None
    # JSON edge: fixbugs.stages.validate.repair_summary, as the report prints it
    repair: dict[str, Any] | None = None
    events: tuple[ProgressEvent, ...] = ()
    notes: tuple[str, ...] = ()
    records: tuple[CallRecord, ...] = ()  # model and tool calls so far
    walls: dict[str, float] = Field(default_factory=dict)  # agent stage -> seconds


def record_of(
    ctx: RunContext,
    *,
    static: tuple[FileEvidence, ...] | list[FileEvidence] = (),
    relevance: tuple[FileEvidence, ...] | list[FileEvidence] = (),
    sbfl: tuple[FileEvidence, ...] | list[FileEvidence] = (),
    walls: dict[str, float] | None = None,
) -> BugRun:
    """The record of ``ctx`` now, with the file evidence the driver holds for later stages."""
    return BugRun(
        started=ctx.started,
        analysis=Analysis(
            evidence=tuple(ctx.evidence),
            log_digest=ctx.log_digest,
            failure=ctx.failure,
            static_ranking=tuple(ctx.static_ranking),
            first_hypothesis_s=ctx.first_hypothesis_s,
            static=tuple(static),
            relevance=tuple(relevance),
        ),
        reproduction=ctx.reproduction,
        sbfl=Sbfl(
            suspicious={k: tuple(v) for k, v in ctx.suspicious.items()},
            evidence=tuple(sbfl),
            suite_baseline=dict(ctx.suite_baseline) if ctx.suite_baseline is not None else None,
        ),
        ranked=tuple(ctx.ranked),
        root_cause=ctx.root_cause,
        regions=tuple(ctx.regions),
        fix=FixProposal(candidates=tuple(ctx.candidates)),
        validation=ctx.validation,
        repair=ctx.repair_run,
        events=tuple(ctx.events),
        notes=tuple(ctx.notes),
        records=tuple(ctx.recorder.records),
        walls=dict(walls or {}),
    )


def restore_into(run: BugRun, ctx: RunContext) -> None:
    """Put ``run`` into a fresh context (same inputs, this worker's models and sandbox)."""
    a = run.analysis
    ctx.started = run.started
    ctx.events = list(run.events)
    ctx.notes = list(run.notes)
    ctx.evidence = list(a.evidence)
    ctx.log_digest = a.log_digest
    ctx.failure = a.failure
    ctx.static_ranking = list(a.static_ranking)
    ctx.first_hypothesis_s = a.first_hypothesis_s
    ctx.reproduction = run.reproduction
    ctx.suspicious = {k: list(v) for k, v in run.sbfl.suspicious.items()}
    sb = run.sbfl.suite_baseline
    ctx.suite_baseline = dict(sb) if sb is not None else None
    ctx.ranked = list(run.ranked)
    ctx.root_cause = run.root_cause
    ctx.regions = list(run.regions)
    ctx.candidates = list(run.fix.candidates)
    ctx.validation = run.validation
    ctx.repair_run = run.repair
    ctx.recorder.origin = run.started
    for r in run.records:
        ctx.recorder.add(r)
