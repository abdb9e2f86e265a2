"""The repair engine's record of one validation: what ran, what passed, what each candidate did.

It travels inside the run's record (:class:`fixbugs.run.record.Validation`)
and is the report's ``repair`` object as it is: the JSON report, the
markdown (:mod:`fixbugs.repair.render`) and ``fixbugs bench repair`` read
these models, never a dict.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from fixbugs.repair.candidate_runs import CandidateOutcome, Status, ValidationRun, default_limit
from fixbugs.repair.ranking import OverfitRisk, RepairCandidate
from fixbugs.repair.shapes import ShapeKind
from fixbugs.repair.verdict import FailedCheck

__all__ = [
    "CandidateRecord",
    "ChecksBench",
    "PassedCandidate",
    "RepairBench",
    "RepairSummary",
    "bench_figures",
    "checks_figures",
    "repair_summary",
]

# the report lists at most this many candidate outcomes (the counts cover all)
MAX_OUTCOMES = 400


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PassedCandidate(_Frozen):
    """A candidate that passed every validation stage, ``validated`` unless it fails a check."""

    id: int
    path: str
    template: str
    why: str
    lines: tuple[int, int]
    score: float
    suspiciousness: float
    prior: float
    naturalness: float
    diff_lines: int
    overfit_risk: OverfitRisk
    shape: ShapeKind | None
    shape_reason: str | None
    diff: str
    validated: bool
    seconds: float | None
    found_at_s: float | None
    checks: tuple[FailedCheck, ...] = ()  # every check it failed, its shape's first
    change_nodes: int | None = None  # AST nodes its change adds or removes

    @classmethod
    def of(cls, c: RepairCandidate, outcome: CandidateOutcome | None) -> PassedCandidate:
        """The record of ``c``, which passed every stage (``outcome``: its run, if recorded)."""
        return cls(
            id=c.id,
            path=c.path,
            template=c.template,
            why=c.why,
            lines=(c.start, c.end),
            score=round(c.score, 4),
            suspiciousness=round(c.suspiciousness, 3),
            prior=c.prior,
            naturalness=round(c.naturalness, 3),
            diff_lines=c.size,
            overfit_risk=c.overfit_risk,
            shape=c.shape.kind if c.shape else None,
            shape_reason=c.shape.reason if c.shape else None,
            diff=c.diff,
            validated=not c.looks_overfit,
            seconds=outcome.seconds if outcome else None,
            found_at_s=outcome.finished_at if outcome else None,
            checks=c.failed_checks,
            change_nodes=c.change_nodes,
        )


class CandidateRecord(_Frozen):
    """What one candidate came to: the stage that rejected it, or why it never ran."""

    id: int
    status: Status
    stage: str | None
    detail: str
    seconds: float
    finished_at_s: float
    template: str | None


class RepairBench(_Frozen):
    """``--repair-bench``: the same candidate list validated sequentially, then in parallel."""

    limit: int
    sequential_s: float
    parallel_s: float
    speedup: float | None
    first_validated_s: float | None
    sequential_first_validated_s: float | None
    sequential_validated: tuple[int, ...]
    parallel_validated: tuple[int, ...]
    same_validated_result: bool
    sequential_candidates_run: int
    parallel_candidates_run: int


class ChecksBench(_Frozen):
    """``fixbugs bench validate``: what the verdict's checks (issue 44, items 2-6) cost.

    The same candidates validated twice, side by side: on the tests alone (the
    gate before those checks: the first candidate in rank order that passes the
    failing tests, the changed module's tests and the suite is the fix), then as
    a run validates (each pass judged, the search going on past one that fails a
    check, the least change leading, the package's tests on the lead). Each wall
    covers its whole pass, the lead's package tests included.
    """

    tests_only_s: float
    with_checks_s: float
    ratio: float | None  # with_checks_s / tests_only_s
    tests_only_fix: str | None  # the diff the tests alone would have given
    with_checks_fix: str | None  # the lead's diff
    with_checks_verdict: str  # the lead's verdict level
    same_fix: bool
    tests_only_candidates_run: int
    with_checks_candidates_run: int


def checks_figures(
    plain: ValidationRun,
    plain_s: float,
    checked: ValidationRun,
    checked_s: float,
    lead: RepairCandidate | None,
    verdict: str,
) -> ChecksBench:
    """The tests-only pass against the checked one, over one candidate list."""
    first = plain.validated[0].diff if plain.validated else None
    fix = lead.diff if lead is not None else None
    return ChecksBench(
        tests_only_s=round(plain_s, 3),
        with_checks_s=round(checked_s, 3),
        ratio=round(checked_s / plain_s, 2) if plain_s > 0 else None,
        tests_only_fix=first,
        with_checks_fix=fix,
        with_checks_verdict=verdict,
        same_fix=first == fix,
        tests_only_candidates_run=_ran(plain),
        with_checks_candidates_run=_ran(checked),
    )


class RepairSummary(_Frozen):
    """Validated fixes, overfitting passes, per-stage rejections and timings of one search."""

    candidates: int
    validated: tuple[PassedCandidate, ...]  # the lead first (fixbugs.stages.lead.lead_order)
    overfitting: tuple[PassedCandidate, ...] = ()  # passed every stage but failed a check
    first_validated_s: float | None
    wall_s: float
    rejected_by_stage: dict[str, int]
    outcomes_by_status: dict[str, int]
    budget_spent: bool
    outcomes: tuple[CandidateRecord, ...]
    bench: RepairBench | None = None
    checks_bench: ChecksBench | None = None


def repair_summary(
    run: ValidationRun,
    cands: list[RepairCandidate],
    *,
    bench: RepairBench | None = None,
    checks_bench: ChecksBench | None = None,
) -> RepairSummary:
    """The record of ``run`` over ``cands`` (ranked); with a bench, its figures too."""
    template = {c.id: c.template for c in cands}
    counts: dict[str, int] = {}
    for o in run.outcomes.values():
        counts[o.status] = counts.get(o.status, 0) + 1
    outcomes = sorted(run.outcomes.values(), key=lambda o: o.finished_at)[:MAX_OUTCOMES]
    return RepairSummary(
        candidates=len(cands),
        validated=tuple(
            PassedCandidate.of(c, run.outcomes.get(c.id))
            for c in run.validated
            if not c.looks_overfit
        ),
        overfitting=tuple(
            PassedCandidate.of(c, run.outcomes.get(c.id)) for c in run.validated if c.looks_overfit
        ),
        first_validated_s=run.first_validated_s,
        wall_s=round(run.wall_s, 3),
        rejected_by_stage=run.rejected_by_stage(),
        outcomes_by_status=counts,
        budget_spent=run.budget_spent,
        outcomes=tuple(
            CandidateRecord(
                id=o.id,
                status=o.status,
                stage=o.stage,
                detail=o.detail,
                seconds=round(o.seconds, 3),
                finished_at_s=round(o.finished_at, 3),
                template=template.get(o.id),
            )
            for o in outcomes
        ),
        bench=bench,
        checks_bench=checks_bench,
    )


def _ran(run: ValidationRun) -> int:
    return sum(1 for o in run.outcomes.values() if o.status != "skipped")


def bench_figures(seq: ValidationRun, par: ValidationRun) -> RepairBench:
    """Sequential against parallel validation of one candidate list."""
    first_seq = [c.diff for c in seq.validated[:1]]
    first_par = [c.diff for c in par.validated[:1]]
    return RepairBench(
        limit=default_limit(),
        sequential_s=round(seq.wall_s, 3),
        parallel_s=round(par.wall_s, 3),
        speedup=round(seq.wall_s / par.wall_s, 2) if par.wall_s > 0 else None,
        first_validated_s=par.first_validated_s,
        sequential_first_validated_s=seq.first_validated_s,
        sequential_validated=tuple(c.id for c in seq.validated),
        parallel_validated=tuple(c.id for c in par.validated),
        same_validated_result=first_seq == first_par,
        sequential_candidates_run=_ran(seq),
        parallel_candidates_run=_ran(par),
    )
