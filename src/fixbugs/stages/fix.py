"""The fix stage: candidate diffs limited to the localized region.

Two generators feed one ordered list. The model proposes a rewrite of the
root-cause lines (grammar-constrained JSON, so the answer is always a line
range and a replacement); generic mutation operators propose one-line edits
at the most suspicious lines. Neither is trusted: every candidate goes
through validation, and a diff that strays outside the localized region is
rejected there.
"""

from __future__ import annotations

from pathlib import Path

from agentrt.errors import ProviderError
from agentrt.llm import ChatRequest
from fixbugs.context import Candidate, RunContext
from fixbugs.mutate import ast_mutations, mutations_in_region
from fixbugs.patch import apply_line_edit, make_diff, replace_lines

__all__ = ["fix_regions", "propose_fixes"]

FIX_SCHEMA = {
    "type": "object",
    "properties": {
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer"},
        "replacement": {"type": "string"},
    },
    "required": ["start_line", "end_line", "replacement"],
}
FIX_SYSTEM = (
    "You fix bugs with the smallest possible change. You answer with JSON: the first and "
    "last line numbers to replace and the replacement code for exactly those lines."
)


def fix_regions(ctx: RunContext) -> list[tuple[str, int, int]]:
    """Localized regions in priority order: the root cause, then SBFL's top ranges."""
    regions: list[tuple[str, int, int]] = []
    if ctx.root_cause is not None:
        rc = ctx.root_cause
        regions.append((rc.path, rc.start, rc.end))
    ranked = sorted(
        ((score, path, a, b) for path, rs in ctx.suspicious.items() for a, b, score in rs),
        key=lambda t: -t[0],
    )
    for _score, path, a, b in ranked[:12]:
        if (path, a, b) not in regions:
            regions.append((path, a, b))
    return regions


def _numbered(text: str, start: int, end: int, context: int = 4) -> str:
    lines = text.splitlines()
    lo, hi = max(1, start - context), min(len(lines), end + context)
    return "\n".join(f"{n:5d} | {lines[n - 1]}" for n in range(lo, hi + 1))


async def _model_candidate(ctx: RunContext, root: Path) -> Candidate | None:
    rc = ctx.root_cause
    if rc is None or ctx.models is None or not ctx.options.use_model:
        return None
    text = (root / rc.path).read_text(errors="replace")
    report = ctx.inputs.report
    prompt = (
        f"Bug report title: {report.title}\n"
        f"Root cause: {rc.explanation}\n\n"
        f"File {rc.path}, lines {rc.start}-{rc.end} are at fault:\n"
        f"{_numbered(text, rc.start, rc.end)}\n\n"
        "Give the corrected code for the faulty lines."
    )
    req = ChatRequest.of(
        prompt, system=FIX_SYSTEM, max_tokens=200, json_schema=FIX_SCHEMA, stage="fix"
    )
    try:
        res = await ctx.models.judge.complete(req)
    except ProviderError as exc:
        ctx.note("fix", f"model fix proposal failed: {exc}")
        return None
    ans = res.parsed or {}
    try:
        start, end = int(ans["start_line"]), int(ans["end_line"])
        new_text = replace_lines(text, start, end, str(ans["replacement"]))
    except (KeyError, TypeError, ValueError) as exc:
        ctx.note("fix", f"model fix proposal unusable: {exc}")
        return None
    if new_text == text:
        return None
    return Candidate(make_diff(rc.path, text, new_text), "model", f"model rewrite of {start}-{end}")


async def propose_fixes(ctx: RunContext, root: Path) -> list[Candidate]:
    """Candidates for the code at ``root`` (the sandbox copy), best first."""
    out: list[Candidate] = []
    seen: set[str] = set()

    def add(c: Candidate) -> None:
        if c.diff and c.diff not in seen:
            seen.add(c.diff)
            out.append(c)

    model_c = await _model_candidate(ctx, root)
    if model_c is not None:
        add(model_c)
    texts: dict[str, str] = {}
    for path, a, b in fix_regions(ctx):
        if path not in texts:
            f = root / path
            if not f.is_file():
                continue
            texts[path] = f.read_text(errors="replace")
        text = texts[path]
        for tedit in ast_mutations(path, text, ((a, b),)):
            add(
                Candidate(
                    make_diff(path, text, tedit.new_text),
                    "mutation",
                    f"{path}:{tedit.start}: {tedit.why}",
                )
            )
        for edit in mutations_in_region(path, text, ((a, b),)):
            add(
                Candidate(
                    make_diff(path, text, apply_line_edit(text, edit)),
                    "mutation",
                    f"{path}:{edit.line}: {edit.why}",
                )
            )
            if len(out) >= ctx.options.max_candidates:
                return out
    return out
