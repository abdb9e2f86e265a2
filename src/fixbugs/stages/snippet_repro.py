"""The reproduction stage's path through the report's own code.

:func:`run_report_snippets` runs the report's first snippets
(:func:`fixbugs.inputs.snippets.extract_snippets`), with the imports they
leave out (:mod:`fixbugs.stages.snippet_names`), in the workspace, through
the project's interpreter, until one fails as the report shows;
:func:`from_snippet` makes the stage's :class:`Reproduction` of that run: its
``script`` is the snippet, its ``command`` the snippet's self-contained gate
(:func:`fixbugs.stages.snippet.gate_command`) that validation runs as its
fail-to-pass stage, beside the project's test folder as the last gate.
:func:`snippet_spectrum` is SBFL's run: the snippet as the failing test,
the top-ranked files' existing tests as the passing ones, through
:func:`fixbugs.localize.sbfl.run_sbfl`, the one coverage runner; without a
passing test beside it the spectrum ranks nothing and SBFL is skipped.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from fixbugs.index import is_test_path
from fixbugs.inputs import BugInputs
from fixbugs.inputs.snippets import Snippet, extract_snippets
from fixbugs.localize.sbfl import SbflResult
from fixbugs.pyenv.testverdict import tail
from fixbugs.run.context import RunContext
from fixbugs.run.record import Reproduction, ReproStatus
from fixbugs.sandbox.executor import Workspace
from fixbugs.stages.sbfl_fork import sbfl_in_fork
from fixbugs.stages.snippet import (
    SCRATCH_PREFIX,
    SnippetRun,
    gate_command,
    run_snippet,
    write_snippet_test,
)
from fixbugs.stages.snippet_names import with_free_names_imported

__all__ = ["from_snippet", "judged_run", "run_report_snippets", "snippet_spectrum"]

SNIPPET_RUNS = 3  # the report's first snippets tried
SNIPPET_TIMEOUT_S = 60.0


async def run_report_snippets(
    inputs: BugInputs, ctx: RunContext, workspace: Workspace
) -> SnippetRun | None:
    """Run the report's first snippets; the first that reproduces, else the last one run."""
    if ctx.options.no_python:
        return None
    # the report's text, read in a worker thread: off the service's event loop
    snippets = (await asyncio.to_thread(extract_snippets, inputs.report.text))[:SNIPPET_RUNS]
    last: SnippetRun | None = None
    for pasted in snippets:
        source, imports = await asyncio.to_thread(
            with_free_names_imported, pasted.source, ctx.files()
        )
        s = replace(pasted, source=source)
        if imports:
            ctx.journal.note(
                "reproduction",
                f"the report's {s.kind} snippet uses names it does not import: "
                f"added {'; '.join(imports)}",
            )
        last = await judged_run(
            s,
            ctx,
            workspace,
            tool="the report's snippet",
            said=f"the report's {s.kind} snippet (the report says it {s.expects})",
            timeout_s=SNIPPET_TIMEOUT_S,
        )
        if last.verdict.status == "reproduced":
            break
    return last


async def judged_run(
    snippet: Snippet,
    ctx: RunContext,
    workspace: Workspace,
    *,
    tool: str,
    said: str,
    timeout_s: float,
) -> SnippetRun:
    """One run of ``snippet`` in ``workspace`` with the project's interpreter, recorded as
    the tool call ``tool``; its verdict goes to the run's notes after ``said``."""
    env = ctx.options.python
    with ctx.recorder.tool_call(tool):
        run = await run_snippet(
            snippet,
            workspace,
            python=str(env.python) if env is not None else "python",
            env=ctx.options.test_env,
            timeout_s=min(ctx.options.test_timeout_s, timeout_s),
        )
    v = run.verdict
    ctx.journal.note("reproduction", f"{said}: {v.status.replace('_', ' ')}: {v.reason}")
    return run


def _suite(ctx: RunContext) -> str | None:
    """The project's test folder as one pytest run (the snippet's last gate), if pytest is there."""
    env = ctx.options.python
    if env is not None and env.pytest is None:
        return None
    files = ctx.files()
    for folder in ("tests", "test", "testing"):
        if any(p.startswith(folder + "/") and is_test_path(p) for p in files):
            return f"python -m pytest -v -p no:cacheprovider {folder}"
    return None


def from_snippet(run: SnippetRun, ctx: RunContext) -> Reproduction:
    """The stage's record of a snippet's run: confirmed only when it failed as reported.

    A script the model wrote (kind ``written``) is recorded as origin ``written``,
    so no reader takes it for the user's own code."""
    v, s = run.verdict, run.snippet
    what = "the model's script" if s.kind == "written" else "the report's snippet"
    if v.status == "reproduced":
        summary = f"{what} fails as reported: {v.reason}"
        status: ReproStatus = "confirmed"
    elif v.status == "could_not_run":
        summary = f"could not run {what}: {v.reason}; the bug was not reproduced"
        status = "could_not_run"
    else:
        summary = f"{what} does not fail as reported: {v.reason}"
        status = "passes"
    confirmed = status == "confirmed"
    rep = Reproduction(
        gate_command(s) if confirmed else None,
        "written" if s.kind == "written" else "snippet",
        status,
        summary,
        output_tail=tail(run.output),
        suite_command=_suite(ctx) if confirmed else None,
        script=s.source,
        expected=s.expected,
    )
    ctx.journal.emit(
        "reproduction",
        "reproduction",
        f"{'confirmed' if confirmed else 'not confirmed'}: {summary}",
        rep.event_data(),
    )
    return rep


async def snippet_spectrum(
    snippet: Snippet, others: list[str], python: Path, ctx: RunContext, workspace: Workspace
) -> SbflResult:
    """Ochiai scores with ``snippet`` failing, beside ``others`` (test files), in a fork.

    A spectrum in which every line scores the same says nothing and is dropped.
    """
    result = await sbfl_in_fork(
        ctx,
        workspace,
        python,
        others,
        what="the snippet and tests under coverage",
        write_first=lambda root: write_snippet_test(snippet, root),
    )
    scores = {v for lines in result.line_scores.values() for v in lines.values()}
    if len(scores) == 1:
        # no passing test ran any line the snippet ran: every line it ran is equally suspect,
        # which ranks nothing (and would push every file it imported up the ranking)
        why = "no passing test ran the lines the snippet ran: every one scores the same"
        return SbflResult(notes=(why,))
    # the snippet's scratch files are no file of the repository: that is no news
    notes = tuple(n for n in result.notes if SCRATCH_PREFIX not in n)
    return replace(result, notes=notes)
