"""The reproduction stage: see the bug fail before claiming anything about it.

The command is the user's (``--test``), else one found in the report
(:mod:`fixbugs.stages.findtest`); else the report's own code
(:mod:`fixbugs.inputs.snippets`, run by :mod:`fixbugs.stages.snippet`); else an
existing test of the top-ranked files that fails as the report shows; else,
with a trusted judge, a script it writes from the issue, held to what the
issue shows (:mod:`fixbugs.stages.written_repro`). The
snippet comes before the discovered tests: it is the user's own account of the
failure, while a failing test found near the top files may fail for another
reason. The report and the test output are hostile text: every parse of them
runs in a worker thread, off the service's event loop. Everything runs with the
user's interpreter, in the sandbox. "Confirmed" means the named tests were
collected, ran, and failed or errored in the test itself
(:func:`fixbugs.pyenv.testverdict.classify_run`). A collection or import error,
a usage error, no tests collected, a missing interpreter or a missing pytest,
or failures that all come from the machine (a missing module, user or home, no
network: :mod:`fixbugs.pyenv.failures`) is "could not run: REASON", with the
last lines of output, and the bug is *not* reproduced. Once confirmed, a
verbose run of the same test files records which tests pass now, the baseline
that validation holds a fix to. A snippet that reproduces is kept as the
reproduction's ``script``; its coverage is SBFL's failing spectrum, and its
gate command is validation's fail-to-pass gate.
"""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Literal

from fixbugs.inputs import BugInputs
from fixbugs.inputs.snippets import Snippet
from fixbugs.localize.evidence import FileEvidence
from fixbugs.localize.locate import crash_evidence
from fixbugs.localize.sbfl import SbflResult, sbfl_evidence, score_runs, suspicious_ranges
from fixbugs.localize.signals import module_tests
from fixbugs.pyenv.testid import TestId
from fixbugs.pyenv.testoutput import failure_excerpt, parse_outcomes
from fixbugs.pyenv.testrun import parse_test_command, unittest_module
from fixbugs.pyenv.testverdict import classify_run, tail
from fixbugs.run.context import RunContext
from fixbugs.run.record import Analysis, Reproduction, Sbfl
from fixbugs.sandbox.executor import Workspace
from fixbugs.stages.findtest import (
    FailureMatch,
    command_from_frames,
    command_from_report,
    matching_failure,
)
from fixbugs.stages.sbfl_fork import sbfl_in_fork
from fixbugs.stages.snippet_repro import from_snippet, run_report_snippets, snippet_spectrum
from fixbugs.stages.written_repro import written_reproduction

__all__ = ["reproduce", "run_reproduction"]

Origin = Literal["given", "report", "discovered", "none"]
NO_REPRO = (
    "the bug was not reproduced: no test command was given, none was found in the report, "
    "the report shows no code that fails as it says, "
    "and no existing test of the top-ranked files fails as reported; "
    "localization stands on static evidence (pass --test CMD to reproduce and validate)"
)


def _top_tests(analysis: Analysis, ctx: RunContext) -> list[str]:
    """The existing test modules of the three top-ranked files, six at most."""
    files = ctx.files()
    found = (t for r in analysis.ranked[:3] for t in module_tests(r.path, files))
    return list(dict.fromkeys(found))[:6]


async def _discover(
    inputs: BugInputs, analysis: Analysis, ctx: RunContext, workspace: Workspace
) -> str | None:
    """Run the existing tests of the top-ranked files; keep a failure that matches the report."""
    files = ctx.files()
    tests = _top_tests(analysis, ctx)
    if not tests:
        return None
    cmd = "python -m pytest -v -p no:cacheprovider " + " ".join(shlex.quote(t) for t in tests)
    run = await ctx.run_in(workspace, cmd, "existing tests of the top-ranked files")
    output = run.stdout + "\n" + run.stderr

    def matched() -> tuple[list[str], FailureMatch | None]:
        # the output is the tests' to write: a test id names a listed file, or it is none
        failed = [
            t
            for t, o in parse_outcomes(output).items()
            if o in ("failed", "error") and TestId.parse(t).path in files
        ]
        return failed, matching_failure(failed, output, analysis.failure, inputs.report.text)

    failed, hit = await asyncio.to_thread(matched)
    if hit is None:
        ctx.journal.note(
            "reproduction",
            f"ran {len(tests)} existing test module(s) of the top-ranked files: "
            + (
                f"{len(failed)} failing test(s), none matching the report"
                if failed
                else "no failing test"
            ),
        )
        return None
    ctx.journal.note(
        "reproduction", f"{hit.test_id} fails as the report shows: same {hit.evidence}"
    )
    return f"python -m pytest -p no:cacheprovider {shlex.quote(hit.test_id)}"


def _missing_pytest(ctx: RunContext, runner: str) -> str | None:
    if ctx.options.no_python:
        return ctx.options.no_python
    env = ctx.options.python
    if env is not None and runner == "pytest" and env.pytest is None:
        return f"pytest is not installed in the project's environment ({env.python})"
    return None


async def reproduce(
    inputs: BugInputs, analysis: Analysis, ctx: RunContext, workspace: Workspace
) -> Reproduction:
    """Run the bug's test command (given, found in the report, the report's snippet,
    or discovered) and judge it."""
    return (await _reproduce(inputs, analysis, ctx, workspace))[0]


async def _reproduce(
    inputs: BugInputs, analysis: Analysis, ctx: RunContext, workspace: Workspace
) -> tuple[Reproduction, Snippet | None]:
    """The reproduction, and the snippet it ran when that snippet reproduced the bug."""
    report = inputs.report
    cmd = inputs.test_command
    origin: Origin = "given"
    if not cmd:
        origin = "report"
        cmd = await asyncio.to_thread(
            command_from_report, report.body + "\n" + "\n".join(report.comments)
        ) or command_from_frames(analysis.failure, ctx.files())
    snippet = None
    if not cmd:
        snippet = await run_report_snippets(inputs, ctx, workspace)
        if snippet is not None and snippet.verdict.status == "reproduced":
            crash = await _crash(snippet.output, ctx)
            return replace(from_snippet(snippet, ctx), crash=crash), snippet.snippet
    if (
        not cmd
        and not ctx.options.no_python
        and (ctx.options.python is None or ctx.options.python.pytest)
    ):
        origin = "discovered"
        cmd = await _discover(inputs, analysis, ctx, workspace)
    if not cmd:
        written = await written_reproduction(inputs, analysis.ranked, ctx, workspace)
        if written is not None and written.verdict.status == "reproduced":
            crash = await _crash(written.output, ctx)
            return replace(from_snippet(written, ctx), crash=crash), written.snippet
    if not cmd and snippet is not None:
        return from_snippet(snippet, ctx), None
    if not cmd:
        rep = Reproduction(None, "none", "none", NO_REPRO)
        ctx.journal.emit("reproduction", "reproduction", rep.summary, rep.event_data())
        return rep, None
    parsed = parse_test_command(cmd)
    missing = _missing_pytest(ctx, parsed.runner)
    if missing:
        rep = Reproduction(
            cmd, origin, "could_not_run", f"could not run: {missing}; the bug was not reproduced"
        )
        ctx.journal.emit("reproduction", "reproduction", rep.summary, rep.event_data())
        return rep, None
    # the one run that compiles the project for the forks (run_reproduction keeps it)
    run = await ctx.run_in(workspace, cmd, "reproduce", write_bytecode=True)
    # paths as the user knows them: relative to their repository, not the sandbox copy
    output = (run.stdout + "\n" + run.stderr).replace(f"{workspace.root}/", "")
    verdict = await asyncio.to_thread(
        classify_run, parsed.runner, run.returncode, output, timed_out=run.timed_out
    )
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
        vrun = await ctx.run_in(workspace, verbose, "baseline tests")
        baseline = dict(await asyncio.to_thread(parse_outcomes, vrun.stdout + "\n" + vrun.stderr))
    excerpt = await asyncio.to_thread(failure_excerpt, parsed.runner, output) if confirmed else ""
    rep = Reproduction(
        cmd,
        origin,
        "confirmed" if confirmed else "passes" if verdict.status == "passed" else "could_not_run",
        summary,
        baseline,
        verbose,
        tail(output),
        parsed.suite(),
        failure_text=excerpt,
    )
    passing = sum(1 for v in baseline.values() if v == "passed")
    ctx.journal.emit(
        "reproduction",
        "reproduction",
        f"{'confirmed' if confirmed else 'not confirmed'}: {summary}"
        + (f"; {passing} other test(s) pass now and must keep passing" if baseline else ""),
        rep.event_data(),
    )
    if rep.status == "could_not_run":
        ctx.journal.note("reproduction", f"last lines of `{cmd}`:\n{tail(output, 10)}")
    return rep, None


async def _crash(output: str, ctx: RunContext) -> tuple[FileEvidence, ...]:
    """The project frames of the traceback the report's snippet printed when it reproduced
    the bug (parsed off the loop: the output is the repository code's), and a note naming
    the deepest.

    Only a snippet's: with a failing test, SBFL already ranks where the test
    ran, and the crash of a test run was not measured on the pool (MEASUREMENTS.md).
    """
    found = tuple(await asyncio.to_thread(crash_evidence, output, ctx.files()))
    if found:
        ctx.journal.note("reproduction", f"the reproduction's crash: {found[0].reason}")
    return found


async def run_reproduction(
    inputs: BugInputs, analysis: Analysis, ctx: RunContext, workspace: Workspace
) -> tuple[Reproduction, Sbfl]:
    """Reproduce in ``workspace``, then SBFL evidence when the failure was seen.

    A confirmed reproduction's compiled modules are kept for every later fork
    (:meth:`~fixbugs.sandbox.executor.Workspace.keep_bytecode`): SBFL's and
    each candidate's runs then import the project instead of compiling it.

    The first stage to run the repository's code says, in the run's notes,
    which containment its commands run without (none as root on a machine
    that has every mechanism): a weaker sandbox is never silent in a report.
    """
    for line in workspace.containment():
        ctx.journal.note("reproduction", line)
    rep, snippet = await _reproduce(inputs, analysis, ctx, workspace)
    if rep.confirmed:
        # every later run is in a fork: let them import what this run compiled
        ctx.journal.note("reproduction", await asyncio.to_thread(workspace.keep_bytecode))
    if snippet is not None:
        return rep, await _snippet_sbfl(snippet, analysis, ctx, workspace)
    return rep, await _sbfl(rep, ctx, workspace)


def _no_coverage(ctx: RunContext) -> Sbfl | None:
    env = ctx.options.python
    if env is not None and not env.has_coverage:
        no_cov = (
            f"coverage.py is not available for the tests' Python {env.minor} "
            "(run scripts/setup, or put a coverage wheel in $FIXBUGS_WHEELS)"
        )
        ctx.journal.note("reproduction", f"SBFL skipped: {no_cov}")
        return Sbfl(skipped=no_cov)
    return None


async def _snippet_sbfl(
    snippet: Snippet, analysis: Analysis, ctx: RunContext, workspace: Workspace
) -> Sbfl:
    """Ochiai with the snippet as the failing test, beside the top files' existing tests.

    The snippet runs as one pytest test in a fork (:func:`write_snippet_test`),
    so :func:`run_sbfl` measures it like any test; its scratch folder is no
    file of the repository and gets no score.
    """
    if not ctx.options.use_sbfl:
        return Sbfl()
    env = ctx.options.python
    if env is not None and env.pytest is None:
        why = "pytest is not installed in the project's environment (the snippet's coverage run)"
        ctx.journal.note("reproduction", f"SBFL skipped: {why}")
        return Sbfl(skipped=why)
    if (skipped := _no_coverage(ctx)) is not None:
        return skipped
    python = env.python if env is not None else Path("python")
    result = await snippet_spectrum(snippet, _top_tests(analysis, ctx), python, ctx, workspace)
    return _scored(result, ctx)


async def _sbfl(rep: Reproduction, ctx: RunContext, workspace: Workspace) -> Sbfl:
    """Ochiai over per-test coverage, in a fork of the workspace."""
    if not rep.confirmed or rep.command is None or not ctx.options.use_sbfl:
        return Sbfl()
    parsed = parse_test_command(rep.command)
    test_files = list(parsed.files)
    if parsed.runner == "unittest":
        mods = [unittest_module(t) for t in parsed.targets]
        test_files = [m if m.endswith(".py") else m.replace(".", "/") + ".py" for m in mods]
    test_files = [t for t in test_files if t in ctx.files()]
    if not test_files:
        return Sbfl(skipped="the test command names no test file of the repository")
    if (skipped := _no_coverage(ctx)) is not None:
        return skipped
    env = ctx.options.python
    python = env.python if env is not None else Path("python")
    result = await sbfl_in_fork(ctx, workspace, python, test_files, what="tests under coverage")
    return _scored(result, ctx)


def _scored(result: SbflResult, ctx: RunContext) -> Sbfl:
    """The record's SBFL part from a run's scores; its notes go to the journal."""
    for n in result.notes:
        ctx.journal.note("reproduction", n)
    skipped = None
    if not result.line_scores:
        skipped = (result.notes or ("no line run by a failing test was measured",))[0]
    suspicious = {
        path: tuple(
            (a, b, max(scores.get(i, 0.0) for i in range(a, b + 1)))
            for a, b in suspicious_ranges(scores)
        )
        for path, scores in result.line_scores.items()
    }
    spectrum = {path: score_runs(scores) for path, scores in result.line_scores.items()}
    return Sbfl(
        suspicious=suspicious,
        spectrum=spectrum,
        evidence=tuple(sbfl_evidence(result)),
        skipped=skipped,
    )
