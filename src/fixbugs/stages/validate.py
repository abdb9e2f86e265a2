"""The validation stage: a fix is claimed only when it is proven, and says how far.

Ranked candidates are validated (:mod:`fixbugs.repair.candidate_runs`), up
to ``AgentOptions.validation_slots`` at once (one per core by default; one
at a time in the staged driver, whose repair stage holds one core), each in
a fork of the workspace's pristine tree, stage by stage: the failing tests,
then the tests of the changed module (found by name and by import), then
every test of the test folder that passed before, where there is one and
it holds at most :data:`SUITE_MAX_TEST_FILES` test files (:func:`bounded_suite`:
sympy's folder of 427-450 files, sharded over both cores, held test-given
runs past the pool's 600 s cut with no verdict; the run notes it is left out).

Passing those is not yet ``validated`` (issue 44): each candidate that
passed is judged (:func:`fixbugs.stages.lead.judge`: shapes that only hide
the failure or change what else the code does, a module no test of the
project exercises), the lead is chosen among them, no failed check and the
smallest change first (:func:`fixbugs.stages.lead.lead_order`), and the
tests of its package run once on it. The verdict
(:class:`~fixbugs.repair.verdict.VerdictLevel`) is ``validated`` when every
check holds, ``passes_tests`` with each failed check in one line when one
does not, ``no_fix`` when nothing passed. The first clean pass ends the
search; one that fails a check is kept as a fallback and the search goes on
within the budget.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from agentrt import Trust
from fixbugs.diffs import Hunk, diff_hunks
from fixbugs.index import is_test_path
from fixbugs.inputs import BugInputs
from fixbugs.pyenv.testrun import parse_test_command, suite_shards, suite_test_files
from fixbugs.repair.candidate_runs import (
    CandidateOutcome,
    Stage,
    ValidationRun,
    default_limit,
    validate_parallel,
)
from fixbugs.repair.ranking import RepairCandidate, with_shape
from fixbugs.repair.summary import RepairBench, bench_figures, checks_figures, repair_summary
from fixbugs.repair.verdict import VerdictLevel
from fixbugs.run.context import RunContext
from fixbugs.run.progress import CandidateData, ValidatedData
from fixbugs.run.record import BugRun, Diagnosis, Reproduction, Validation
from fixbugs.sandbox.executor import Workspace
from fixbugs.sandbox.limits import CommandResult
from fixbugs.stages.confirm import confirmed_diagnosis
from fixbugs.stages.lead import judge, lead_order, module_files, settle_lead
from fixbugs.stages.model_scope import rewrite_refusal, rewrite_roots
from fixbugs.stages.repair_scope import fix_regions
from fixbugs.stages.sources import can_validate, stepwise_refiner, test_constants

__all__ = [
    "out_of_scope",
    "run_validation",
    "validate_candidates",
]


# the test folder's size above which its whole run is left out (scripts/suite-sizes: the largest
# of the dev sets' and the pool's BugsInPy folders is fastapi's 183 files; sympy's 427-450)
SUITE_MAX_TEST_FILES = 300


def bounded_suite(suite: str | None, files: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The whole-folder gate to run (None: none), and the note saying why it was left out."""
    tests = suite_test_files(suite, files) if suite else None
    if tests is None or len(tests) <= SUITE_MAX_TEST_FILES:
        return suite, None
    return None, (
        f"the whole test folder ({len(tests)} test files, over {SUITE_MAX_TEST_FILES}) is not "
        "run for each passing candidate; the changed module's and its package's tests stand in"
    )


def out_of_scope(hunks: list[Hunk], regions: list[tuple[str, int, int]], slack: int) -> list[str]:
    """Hunks of a diff that touch code outside every localized region."""
    bad: list[str] = []
    for h in hunks:
        if is_test_path(h.path):
            bad.append(f"{h.path}: edits a test file")
            continue
        if not any(h.within(p, a, b, slack) for p, a, b in regions):
            bad.append(f"{h.path}:{h.start}-{h.end}: outside the localized region")
    return bad


def _refusal(
    cand: RepairCandidate,
    prior: BugRun,
    trust: Trust,
    regions: list[tuple[str, int, int]],
    files: Mapping[str, str],
    slack: int,
) -> str | None:
    """Why a diff FixBugs did not write may not run: outside the localized regions, or,
    the model's rewrite under a judge trusted high, outside what that trust allows
    (:func:`fixbugs.stages.model_scope.rewrite_refusal`, the fix stage's own rule)."""
    hunks = diff_hunks(cand.diff)
    rc = prior.root_cause
    if cand.template == "model" and rc is not None and trust == "high":
        return rewrite_refusal(hunks, rewrite_roots(prior), trust, files, slack)
    bad = out_of_scope(hunks, regions, slack)
    return bad[0] if bad else None


def _stages(
    repro: Reproduction, files: Mapping[str, str], suite_timeout_s: float
) -> Callable[[RepairCandidate], list[Stage]]:
    """The gates of each candidate: its failing tests (the test timeout), then its
    module's tests and the whole suite (``suite_timeout_s`` each)."""
    assert repro.command is not None
    parsed = parse_test_command(repro.command)
    memo: dict[str, list[Stage]] = {}

    def for_candidate(c: RepairCandidate) -> list[Stage]:
        if c.path in memo:
            return memo[c.path]
        stages = [Stage("failing", repro.command or "")]
        module: Stage | None = None
        if parsed.runner == "pytest":
            mods = module_files(c.path, parsed.files, files)
            cmd = "python -m pytest -v -p no:cacheprovider " + " ".join(
                shlex.quote(m) for m in mods
            )
            if mods and sorted(mods) == sorted(parsed.files) and repro.baseline:
                module = Stage("module", repro.verbose_command or cmd, repro.baseline)
            elif mods:
                module = Stage("module", cmd, None, lazy_baseline=True)
        elif repro.verbose_command and repro.baseline:
            module = Stage("module", repro.verbose_command, repro.baseline)
        if module is not None:
            stages.append(replace(module, timeout_s=suite_timeout_s))
        if repro.suite_command:
            shards = suite_shards(repro.suite_command, files, default_limit())
            stages.append(Stage("suite", repro.suite_command, None, True, shards, suite_timeout_s))
        memo[c.path] = stages
        return stages

    return for_candidate


async def validate_candidates(
    prior: BugRun,
    ctx: RunContext,
    workspace: Workspace,
    candidates: Sequence[RepairCandidate],
) -> Validation:
    """Validate ``candidates`` (ranked, best first; ids unique) in forks of ``workspace``."""
    if len({c.id for c in candidates}) != len(candidates):
        raise ValueError("repair candidates must have distinct ids")
    repro = prior.reproduction
    if not can_validate(repro):
        return Validation(
            VerdictLevel.NO_FIX, None, 0, "no validated fix: the bug was not reproduced"
        )
    files = ctx.files()
    regions = fix_regions(prior, files)
    cands: list[RepairCandidate] = []
    refused: dict[int, str] = {}  # position in ``candidates`` -> why it is never run
    trust = ctx.models.judge_trust if ctx.models is not None else "low"
    for i, cand in enumerate(candidates):
        if cand.template == "model" or not cand.own:
            # text we did not write: its diff must stay where it may change the code
            why = _refusal(cand, prior, trust, regions, files, ctx.options.slack_lines)
            if why is not None:
                refused[i] = f"{cand.label}: rejected, {why}"
                continue
            # and its change is judged as the engine's own are (swallowing, negating...)
            cand = with_shape(cand, files)
        cands.append(cand)
    if not cands:
        return Validation(
            VerdictLevel.NO_FIX,
            None,
            0,
            "no validated fix: no candidate to validate",
            tuple(refused.values()),
        )
    position = {c.id: i for i, c in enumerate(candidates)}

    def on_outcome(c: RepairCandidate, o: CandidateOutcome) -> None:
        if o.status == "validated" and c.looks_overfit:
            first = c.failed_checks[0]
            ctx.journal.emit(
                "candidate", "validation",
                f"#{c.id} {c.why} passes the tests but is not validated: it {first.line()}",
                CandidateData(c.diff, first.kind),
            )  # fmt: skip
        elif o.status == "validated":
            ctx.journal.emit("validated", "validation", f"validated: {c.why}",
                             ValidatedData(c.diff, c.overfit_risk))  # fmt: skip
        elif o.status in ("rejected", "did_not_apply"):
            ctx.journal.emit(
                "candidate",
                "validation",
                f"rejected #{c.id} {c.why} at {o.stage}: {o.detail}",
                CandidateData(),
            )

    async def run(sb: Workspace, cmd: str, what: str, timeout_s: float) -> CommandResult:
        with ctx.recorder.tool_call(what):
            return await sb.run(cmd, timeout_s=timeout_s, env=ctx.options.test_env)

    suite, left_out = bounded_suite(repro.suite_command, files)
    if left_out:
        ctx.journal.note("validation", left_out)
    stages = _stages(replace(repro, suite_command=suite), files, ctx.options.suite_timeout_s)
    judged = judge(files, test_constants(prior, files, workspace.baseline))

    async def validate(limit: int, checked: bool = True) -> ValidationRun:
        # each search its own follow-ups: the bench's two runs must not share seeds
        refine = stepwise_refiner(prior, ctx, candidates, workspace.baseline)
        return await validate_parallel(
            cands,
            make_fork=workspace.fork,
            run=run,
            stages=stages,
            clock=ctx.clock,
            budget_s=ctx.options.fix_budget_s,
            limit=limit,
            test_timeout_s=ctx.options.test_timeout_s,
            alternatives=ctx.options.repair_alternatives,
            on_outcome=on_outcome,
            refine=refine,
            judge=judged if checked else None,
        )

    bench: RepairBench | None = None
    plain: tuple[ValidationRun, float] | None = None
    slots = ctx.options.validation_slots or default_limit()
    if ctx.options.repair_bench:
        # the same candidate list, one at a time, then concurrently: side by side
        seq = await validate(1)
        result = await validate(default_limit())
        bench = bench_figures(seq, result)
    else:
        if ctx.options.checks_bench:
            # the same candidate list on the tests alone first: what the checks cost
            t0 = ctx.clock.now()
            tests_only = await validate(slots, checked=False)
            plain = (tests_only, ctx.clock.now() - t0)
        started = ctx.clock.now()
        result = await validate(slots)
    # the follow-ups the search built count like the candidates it was given
    for c in result.added:
        position[c.id] = len(position)
    cands += result.added
    tried = sum(
        1
        for o in result.outcomes.values()
        if o.status in ("validated", "rejected", "did_not_apply")
    )
    # the choice among the candidates that passed, explicit (fixbugs.stages.lead)
    passing = lead_order(result.validated, position)
    lead, broke = await settle_lead(passing, repro, files, ctx, workspace, run)
    result.validated = [c for c in passing if c.id not in broke]
    checks = None
    if plain is not None:
        level = (
            VerdictLevel.NO_FIX
            if lead is None
            else (VerdictLevel.PASSES_TESTS if lead.looks_overfit else VerdictLevel.VALIDATED)
        )
        checks = checks_figures(*plain, result, ctx.clock.now() - started, lead, level.value)
    repair = repair_summary(result, cands, bench=bench, checks_bench=checks)
    ordered: list[tuple[int, str]] = [
        (position[c.id], f"{c.label}: {o.detail}")
        for c in cands
        if (o := result.outcomes.get(c.id)) is not None
        and o.status in ("rejected", "did_not_apply")
    ]
    ordered += list(refused.items())
    ordered += [(position[i], f"{_label(cands, i)}: {why}") for i, why in broke.items()]
    rejected = tuple(w for _p, w in sorted(ordered))[:50]
    stages_txt = ", ".join(f"{k}: {v}" for k, v in result.rejected_by_stage().items()) or "none"
    if broke:
        stages_txt += f", package: {len(broke)}"
    # in rank order, as the repair summary lists them
    overfit = tuple(
        sorted(
            (c for c in result.validated if c.looks_overfit and c is not lead),
            key=lambda c: position[c.id],
        )
    )
    ran = f"{tried} candidate(s) run, rejected by stage: {stages_txt}"
    if lead is not None and not lead.looks_overfit:
        risk = "" if lead.overfit_risk == "low" else f" [overfit risk: {lead.overfit_risk}]"
        also = f"; {len(overfit)} more pass the tests but fail a check" if overfit else ""
        return Validation(
            VerdictLevel.VALIDATED, lead, tried,
            f"validated fix ({lead.template}): {lead.path}:{lead.start}: {lead.why}{risk}; "
            f"{ran}{also}",
            rejected, repair, overfit,
        )  # fmt: skip
    if lead is not None:
        failed = lead.failed_checks
        others = f"; {len(overfit)} more likewise" if overfit else ""
        return Validation(
            VerdictLevel.PASSES_TESTS, lead, tried,
            f"passes tests, not validated ({lead.template}): {lead.label}: it "
            f"{failed[0].line()}" + (f" (and {len(failed) - 1} more)" if len(failed) > 1 else "")
            + f"; {ran}{others}",
            rejected, repair, overfit, failed,
        )  # fmt: skip
    why = " (repair budget spent)" if result.budget_spent else ""
    if broke:
        why += f"; {len(broke)} that passed broke the tests of the changed package"
    return Validation(
        VerdictLevel.NO_FIX, None, tried,
        f"no validated fix ({tried} candidate(s) tested{why}); rejected by stage: {stages_txt}",
        rejected, repair,
    )  # fmt: skip


def _label(cands: Sequence[RepairCandidate], id: int) -> str:
    return next((c.label for c in cands if c.id == id), f"#{id}")


async def run_validation(
    inputs: BugInputs, prior: BugRun, ctx: RunContext, workspace: Workspace
) -> tuple[Validation, Diagnosis | None]:
    """The validation stage: the fix proposal's candidates checked, its summary as a note,
    and the diagnosis with the root cause the validated fix confirms
    (:mod:`fixbugs.stages.confirm`)."""
    validation = await validate_candidates(prior, ctx, workspace, prior.fix.candidates)
    ctx.journal.emit("note", "validation", validation.summary)
    diagnosis, moved = confirmed_diagnosis(inputs, prior, validation)
    if moved is not None:
        ctx.journal.note("validation", moved)
    return validation, diagnosis
