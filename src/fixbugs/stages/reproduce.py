"""The reproduction stage: see the bug fail before claiming anything about it.

The command is the user's (``--test``), else one found for them
(:mod:`fixbugs.stages.findtest`); it runs with the user's interpreter, in the
sandbox. "Confirmed" means the named tests were collected, ran, and failed
or errored in the test itself (:func:`fixbugs.pyenv.testverdict.classify_run`). A
collection or import error, a usage error, no tests collected, a missing
interpreter or a missing pytest is "could not run: REASON", with the last
lines of output, and the bug is *not* reproduced. Once confirmed, a verbose
run of the same test files records which tests pass now, the baseline that
validation holds a fix to.
"""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import Literal

from fixbugs.localize.evidence import Evidence as FileEvidence
from fixbugs.localize.sbfl import run_sbfl, sbfl_evidence, suspicious_ranges
from fixbugs.pyenv.testrun import parse_outcomes, parse_test_command, unittest_module
from fixbugs.pyenv.testverdict import classify_run, tail
from fixbugs.run.context import Reproduction, RunContext
from fixbugs.stages.findtest import (
    command_from_frames,
    command_from_report,
    existing_tests_of,
    matching_failure,
)

__all__ = ["reproduce", "run_reproduction"]

Origin = Literal["given", "report", "discovered", "none"]
NO_REPRO = (
    "the bug was not reproduced: no test command was given, none was found in the report, "
    "and no existing test of the top-ranked files fails as reported; "
    "localization stands on static evidence (pass --test CMD to reproduce and validate)"
)


async def _discover(ctx: RunContext) -> str | None:
    """Run the existing tests of the top-ranked files; keep a failure that matches the report."""
    files = ctx.files()
    tests = existing_tests_of([r.path for r in ctx.ranked[:3]], files)
    if not tests:
        return None
    cmd = "python -m pytest -v -p no:cacheprovider " + " ".join(shlex.quote(t) for t in tests)
    run = await ctx.run_in(ctx.sandbox, cmd, "existing tests of the top-ranked files")
    output = run.stdout + "\n" + run.stderr
    # the output is the tests' to write: a test id names a listed file, or it is none
    failed = [
        t
        for t, o in parse_outcomes(output).items()
        if o in ("failed", "error") and t.split("::", 1)[0] in files
    ]
    hit = matching_failure(failed, output, ctx.failure, ctx.inputs.report.text)
    if hit is None:
        ctx.note(
            "reproduction",
            f"ran {len(tests)} existing test module(s) of the top-ranked files: "
            + (
                f"{len(failed)} failing test(s), none matching the report"
                if failed
                else "no failing test"
            ),
        )
        return None
    return f"python -m pytest -p no:cacheprovider {shlex.quote(hit)}"


def _missing_pytest(ctx: RunContext, runner: str) -> str | None:
    if ctx.options.no_python:
        return ctx.options.no_python
    env = ctx.options.python
    if env is not None and runner == "pytest" and env.pytest is None:
        return f"pytest is not installed in the project's environment ({env.python})"
    return None


async def reproduce(ctx: RunContext) -> Reproduction:
    report = ctx.inputs.report
    cmd = ctx.inputs.test_command
    origin: Origin = "given"
    if not cmd:
        origin = "report"
        cmd = command_from_report(
            report.body + "\n" + "\n".join(report.comments)
        ) or command_from_frames(ctx.failure, ctx.files())
    if (
        not cmd
        and not ctx.options.no_python
        and (ctx.options.python is None or ctx.options.python.pytest)
    ):
        origin = "discovered"
        cmd = await _discover(ctx)
    if not cmd:
        rep = Reproduction(None, "none", "none", NO_REPRO)
        ctx.emit("reproduction", "reproduction", rep.summary)
        return rep
    parsed = parse_test_command(cmd)
    missing = _missing_pytest(ctx, parsed.runner)
    if missing:
        rep = Reproduction(
            cmd, origin, "could_not_run", f"could not run: {missing}; the bug was not reproduced"
        )
        ctx.emit("reproduction", "reproduction", rep.summary, command=cmd, origin=origin)
        return rep
    run = await ctx.run_in(ctx.sandbox, cmd, "reproduce")
    # paths as the user knows them: relative to their repository, not the sandbox copy
    output = (run.stdout + "\n" + run.stderr).replace(f"{ctx.sandbox.root}/", "")
    verdict = classify_run(parsed.runner, run.returncode, output, timed_out=run.timed_out)
    if verdict.status == "failed":
        summary = f"fails as reported: {verdict.reason} (exit {run.returncode})"
    elif verdict.status == "passed":
        summary = "the command passes on the current code: the bug was not reproduced"
    else:
        summary = f"could not run: {verdict.reason}; the bug was not reproduced"
    confirmed = verdict.reproduced
    verbose = parsed.verbose()
    baseline: dict[str, str] = {}
    if confirmed and verbose:
        vrun = await ctx.run_in(ctx.sandbox, verbose, "baseline tests")
        baseline = dict(parse_outcomes(vrun.stdout + "\n" + vrun.stderr))
    rep = Reproduction(
        cmd,
        origin,
        "confirmed" if confirmed else "passes" if verdict.status == "passed" else "could_not_run",
        summary,
        baseline,
        verbose,
        tail(output),
        parsed.suite(),
    )
    passing = sum(1 for v in baseline.values() if v == "passed")
    ctx.emit(
        "reproduction",
        "reproduction",
        f"{'confirmed' if confirmed else 'not confirmed'}: {summary}"
        + (f"; {passing} other test(s) pass now and must keep passing" if baseline else ""),
        command=cmd,
        origin=origin,
        confirmed=confirmed,
        status=rep.status,
    )
    if rep.status == "could_not_run":
        ctx.note("reproduction", f"last lines of `{cmd}`:\n{tail(output, 10)}")
    return rep


async def run_reproduction(ctx: RunContext) -> list[FileEvidence]:
    """Reproduce in ``ctx.sandbox``, then SBFL evidence when the failure was seen."""
    ctx.reproduction = await reproduce(ctx)
    return await _sbfl(ctx)


async def _sbfl(ctx: RunContext) -> list[FileEvidence]:
    """Ochiai over per-test coverage, in a fork of the sandbox."""
    rep = ctx.reproduction
    if rep is None or not rep.confirmed or rep.command is None or not ctx.options.use_sbfl:
        return []
    parsed = parse_test_command(rep.command)
    test_files = list(parsed.files)
    if parsed.runner == "unittest":
        mods = [unittest_module(t) for t in parsed.targets]
        test_files = [m if m.endswith(".py") else m.replace(".", "/") + ".py" for m in mods]
    test_files = [t for t in test_files if t in ctx.files()]
    if not test_files:
        ctx.sbfl_skipped = "the test command names no test file of the repository"
        return []
    env = ctx.options.python
    if env is not None and not env.has_coverage:
        ctx.sbfl_skipped = (
            f"coverage.py is not available for the tests' Python {env.minor} "
            "(run scripts/setup, or put a coverage wheel in $FIXBUGS_WHEELS)"
        )
        ctx.note("reproduction", f"SBFL skipped: {ctx.sbfl_skipped}")
        return []
    python = env.python if env is not None else Path("python")
    fork = await asyncio.to_thread(ctx.sandbox.fork)
    try:
        with ctx.recorder.tool_call("tests under coverage"):
            result = await run_sbfl(
                fork,
                python,
                test_files,
                timeout_s=ctx.options.test_timeout_s,
                env=ctx.options.test_env,
                baseline=fork.baseline,
                listed=ctx.files().keys(),
            )
    finally:
        await asyncio.to_thread(fork.close)
    for n in result.notes:
        ctx.note("reproduction", n)
    if not result.line_scores:
        ctx.sbfl_skipped = (result.notes or ("no line run by a failing test was measured",))[0]
    for path, scores in result.line_scores.items():
        ctx.suspicious[path] = [
            (a, b, max(scores.get(i, 0.0) for i in range(a, b + 1)))
            for a, b in suspicious_ranges(scores)
        ]
    return sbfl_evidence(result)
