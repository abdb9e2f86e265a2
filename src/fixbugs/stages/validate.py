"""The validation stage: a fix is claimed only when it is proven.

For each candidate, in order: its diff must stay inside the localized region
(test files never count as a fix); applied to a fresh copy of the code, the
reproduction must now pass; and every test that passed before must still
pass. The first candidate that survives all three is the validated fix; if
none does, the run says "no validated fix" plainly.
"""

from __future__ import annotations

import asyncio

from fixbugs.context import Candidate, RunContext, Validation
from fixbugs.localize.traceback import is_test_path
from fixbugs.patch import Hunk, diff_hunks
from fixbugs.stages.fix import fix_regions
from fixbugs.testrun import parse_outcomes, regressions

__all__ = ["out_of_scope", "validate_candidates"]


def out_of_scope(hunks: list[Hunk], regions: list[tuple[str, int, int]], slack: int) -> list[str]:
    """Hunks of a diff that touch code outside every localized region."""
    bad: list[str] = []
    for h in hunks:
        if is_test_path(h.path):
            bad.append(f"{h.path}: edits a test file")
            continue
        lo, hi = min(h.start, h.end), max(h.start, h.end)
        if not any(p == h.path and lo >= a - slack and hi <= b + slack for p, a, b in regions):
            bad.append(f"{h.path}:{h.start}-{h.end}: outside the localized region")
    return bad


async def _check(ctx: RunContext, cand: Candidate) -> str | None:
    """None when the candidate validates, else why not."""
    repro = ctx.reproduction
    assert repro is not None and repro.command is not None
    sandbox = await asyncio.to_thread(ctx.sandbox.fork)
    try:
        applied = await asyncio.to_thread(sandbox.apply_patch, cand.diff)
        if not applied.applied:
            return f"does not apply: {applied.message}"
        run = await ctx.run_in(sandbox, repro.command, "reproduction on candidate")
        if run.returncode != 0:
            return "reproduction still fails" + (" (timed out)" if run.timed_out else "")
        if repro.verbose_command and repro.baseline:
            after = await ctx.run_in(sandbox, repro.verbose_command, "regression tests")
            broken = regressions(repro.baseline, after.stdout + "\n" + after.stderr)
            if broken:
                return f"breaks {len(broken)} previously passing test(s), e.g. {broken[0]}"
        return await _suite_check(ctx, sandbox)
    finally:
        await asyncio.to_thread(sandbox.close)


async def _suite_check(ctx: RunContext, sandbox: object) -> str | None:
    """The last gate: no test of the whole test folder that passed before fails now.

    Run only for candidates that passed everything else, so it costs two
    suite runs per validated fix (the baseline is run once, on the original).
    """
    repro = ctx.reproduction
    if repro is None or repro.suite_command is None:
        return None
    if ctx.suite_baseline is None:
        base = await ctx.run_in(ctx.sandbox, repro.suite_command, "test suite baseline")
        ctx.suite_baseline = dict(parse_outcomes(base.stdout + "\n" + base.stderr))
        if not ctx.suite_baseline:
            ctx.note("validation", f"`{repro.suite_command}` named no tests; suite gate skipped")
    if not ctx.suite_baseline:
        return None
    after = await ctx.run_in(sandbox, repro.suite_command, "test suite on candidate")
    broken = regressions(ctx.suite_baseline, after.stdout + "\n" + after.stderr)
    if broken:
        return f"breaks {len(broken)} test(s) elsewhere in the suite, e.g. {broken[0]}"
    return None


async def validate_candidates(ctx: RunContext, candidates: list[Candidate]) -> Validation:
    repro = ctx.reproduction
    if repro is None or not repro.confirmed or repro.command is None:
        return Validation(False, None, 0, "no validated fix: the bug was not reproduced")
    regions = fix_regions(ctx)
    deadline = ctx.clock.now() + ctx.options.fix_budget_s
    rejected: list[str] = []
    tried = 0
    for cand in candidates:
        if ctx.clock.now() > deadline:
            rejected.append("fix budget spent")
            break
        bad = out_of_scope(diff_hunks(cand.diff), regions, ctx.options.slack_lines)
        if bad:
            rejected.append(f"{cand.why}: rejected, {bad[0]}")
            continue
        tried += 1
        why_not = await _check(ctx, cand)
        if why_not is None:
            ctx.emit("validated", "validation", f"validated: {cand.why}", diff=cand.diff)
            return Validation(
                True, cand, tried, f"validated fix ({cand.origin}): {cand.why}", tuple(rejected)
            )
        rejected.append(f"{cand.why}: {why_not}")
        ctx.emit("candidate", "validation", f"rejected {cand.why}: {why_not}")
    return Validation(
        False, None, tried, f"no validated fix ({tried} candidate(s) tested)", tuple(rejected)
    )
