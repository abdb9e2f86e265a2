"""A reproduction the judge writes from the issue, kept only when it fails as the issue says.

Users bring an issue, not a failing test, and most issues hold no code that
runs as pasted (a fragment, prose, a traceback alone). When nothing else
reproduced the bug (no test command given or found, none of the report's
snippets failing as it shows, no existing test of the top files failing as
reported), the judge model may write one standalone script from the issue
and the top-ranked files' outlines, as Agentless does (model step
``reproduce``: off unless the endpoint behind the judge is trusted, since a
weak model's script reproduces nothing).

The script is a candidate, never evidence by itself: it runs in the sandbox
exactly as the report's own snippet would (:func:`fixbugs.stages.snippet_repro.judged_run`,
the project's interpreter, a bounded time) and is judged by the same rule
(:func:`fixbugs.stages.snippet.judge_snippet_run`) against what the *issue*
shows (:func:`fixbugs.inputs.snippets.written_snippet`): the exception of
its pasted traceback or the type it names, never what the script claims.
Only where the issue shows no exception does the script's own failing
``assert`` count, and the reproduction's ``weak_oracle`` check then says the
right result is the model's word (:func:`fixbugs.stages.lead.oracle_check`).
The model's answer and the script are the repository's and the report's
kind of text: parsed host-side only, run only in the sandbox.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from agentrt import AgentrtError, BudgetExhausted, parse_python
from agentrt.graph import with_deadline
from agentrt.llm import ChatRequest
from fixbugs.index import is_test_path
from fixbugs.inputs import BugInputs
from fixbugs.inputs.fences import fenced_blocks
from fixbugs.inputs.snippets import MAX_SCRIPT_CHARS, written_snippet
from fixbugs.localize.rank import RankedFile
from fixbugs.run.context import RunContext
from fixbugs.sandbox.executor import Workspace
from fixbugs.stages.snippet import SnippetRun
from fixbugs.stages.snippet_repro import judged_run

__all__ = ["REPRO_SYSTEM", "repro_prompt", "script_of", "written_reproduction"]

REPRO_SYSTEM = (
    "You write a minimal Python script that reproduces a reported bug with the code of the "
    "repository. The repository's root is the working directory and is on sys.path; use only "
    "its code, the standard library and what the issue's own code imports. While the bug is "
    "present the script must fail: let the exception the issue reports propagate uncaught, or "
    "assert what the issue says the right behaviour is. Once the bug is fixed it must exit 0. "
    "No try/except around the failing call, no test framework, no network, no files outside "
    "the working directory. Answer with one ```python block and nothing else."
)
ISSUE_CHARS = 8_000  # the issue's first characters in the prompt
OUTLINE_FILES = 3  # the top-ranked non-test files whose outlines the prompt shows
OUTLINE_LINES = 60  # each outline's first definitions
WRITTEN_TIMEOUT_S = 60.0
_TAGS = frozenset({"", "python", "py", "python3", "py3"})


def _outline(text: str) -> str:
    """The file's ``class``/``def`` lines, numbered: what a script may call and where."""
    out: list[str] = []
    for no, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip()
        if stripped.startswith(("def ", "async def ", "class ")):
            out.append(f"{no:>5}| {line.rstrip()[:160]}")
            if len(out) == OUTLINE_LINES:
                break
    return "\n".join(out)


def repro_prompt(inputs: BugInputs, ranked: Sequence[RankedFile], files: Mapping[str, str]) -> str:
    """The request: the issue as the user wrote it, then the likely files' outlines."""
    issue = inputs.report.text[:ISSUE_CHARS]
    parts = [f"Issue:\n{issue}\n"]
    shown = 0
    for r in ranked:
        if shown == OUTLINE_FILES:
            break
        text = files.get(r.path)
        if text is None or is_test_path(r.path):
            continue
        parts.append(f"File {r.path} (its definitions, numbered):\n{_outline(text)}\n")
        shown += 1
    parts.append("Write the script that reproduces this bug.")
    return "\n".join(parts)


def script_of(answer: str) -> str | None:
    """The answer's first Python block that parses and is not too long to be a script."""
    for block in fenced_blocks(answer):
        tag = block.tag.strip().lower().split()[0] if block.tag.strip() else ""
        body = block.body
        if tag not in _TAGS or not body.strip() or len(body) > MAX_SCRIPT_CHARS:
            continue
        try:
            parse_python(body)  # host-side parse only: nothing of it runs here
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        return body
    return None


async def written_reproduction(
    inputs: BugInputs, ranked: Sequence[RankedFile], ctx: RunContext, workspace: Workspace
) -> SnippetRun | None:
    """The judge's script for the issue, run and judged in ``workspace``; None when the
    step is off, the model fails or gives no script (each said in the run's notes)."""
    model = ctx.step_model("reproduce")
    if model is None or ctx.options.no_python:
        return None
    files = ctx.files()
    prompt = await asyncio.to_thread(repro_prompt, inputs, ranked, files)
    req = ChatRequest.of(prompt, system=REPRO_SYSTEM, max_tokens=1024, stage="reproduction")
    try:
        result = await with_deadline(
            ctx.clock,
            ctx.step_deadline_s("reproduce"),
            model.complete(req),
            what="reproduction script",
        )
    except BudgetExhausted:
        return None  # the budget's own note says the model work ended
    except AgentrtError as exc:
        ctx.journal.note("reproduction", f"the model's reproduction script failed: {exc}")
        return None
    source = await asyncio.to_thread(script_of, result.text)
    if source is None:
        ctx.journal.note(
            "reproduction", "the model's answer holds no Python script that parses: not run"
        )
        return None
    # the report's text is hostile: read in a worker thread, off the service's event loop
    snippet = await asyncio.to_thread(written_snippet, source, inputs.report.text)
    return await judged_run(
        snippet,
        ctx,
        workspace,
        tool="the model's reproduction script",
        said=f"the model's script (held to what the issue shows: it {snippet.expects})",
        timeout_s=WRITTEN_TIMEOUT_S,
    )
