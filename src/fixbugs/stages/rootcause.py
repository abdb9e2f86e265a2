"""The root-cause stage: one judgment call over the gathered evidence.

The large model (the judge role) reads the bug, the reduced log evidence,
trace findings and excerpts of the top-ranked files, and names a file, a
line range and an explanation. Its answer is checked against what exists:
a file outside the top candidates or lines outside the file are not
accepted. Spectrum-based fault localization, where tests exist, is the
fallback and the tie-breaker, so a weak judge cannot lead the fix astray.
"""

from __future__ import annotations

from typing import Literal

from agentrt.errors import ProviderError
from agentrt.llm import ChatRequest
from fixbugs.context import RootCause, RunContext

__all__ = ["ROOT_CAUSE_SCHEMA", "root_cause"]

ROOT_CAUSE_SCHEMA = {
    "type": "object",
    "properties": {
        "file": {"type": "string"},
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer"},
        "explanation": {"type": "string"},
    },
    "required": ["file", "start_line", "end_line", "explanation"],
}
JUDGE_SYSTEM = (
    "You are a senior engineer finding the root cause of a bug. Use only the evidence "
    "given. Name the file and the line range at fault and explain why in one sentence."
)
TOP_FILES = 3


def _candidate_ranges(ctx: RunContext, path: str, n_lines: int) -> list[tuple[int, int]]:
    ranges = [(a, b) for a, b, _ in ctx.suspicious.get(path, [])]
    ranked = next((r for r in ctx.ranked if r.path == path), None)
    if ranked is not None:
        ranges += [(a, b) for a, b in ranked.lines if (a, b) not in ranges]
    return [(max(1, a), min(n_lines, b)) for a, b in ranges if a <= n_lines] or [
        (1, min(n_lines, 40))
    ]


def _excerpt(text: str, ranges: list[tuple[int, int]], context: int = 3) -> str:
    lines = text.splitlines()
    keep: set[int] = set()
    for a, b in ranges[:3]:
        keep.update(range(max(1, a - context), min(len(lines), b + context) + 1))
    out, prev = [], 0
    for n in sorted(keep):
        if prev and n != prev + 1:
            out.append("      ...")
        out.append(f"{n:5d} | {lines[n - 1]}")
        prev = n
    return "\n".join(out)


def _fallback(ctx: RunContext) -> RootCause | None:
    if not ctx.ranked:
        return None
    top = ctx.ranked[0]
    text = ctx.files()[top.path]
    a, b = _candidate_ranges(ctx, top.path, len(text.splitlines()))[0]
    origin: Literal["sbfl", "static"] = "sbfl" if ctx.suspicious.get(top.path) else "static"
    why = "; ".join(top.reasons[:3])
    return RootCause(
        top.path,
        a,
        b,
        f"most suspicious region of the top-ranked file ({why})",
        origin,
        tuple(top.reasons),
    )


async def root_cause(ctx: RunContext) -> RootCause | None:
    fallback = _fallback(ctx)
    if fallback is None or ctx.models is None or not ctx.options.use_model:
        return fallback
    files = [r.path for r in ctx.ranked[:TOP_FILES]]
    texts = {p: ctx.files()[p] for p in files}
    parts = [f"Bug report: {ctx.inputs.report.title}"]
    if ctx.failure is not None and ctx.failure.exception_type:
        parts.append(
            f"Failure: {ctx.failure.exception_type}: {ctx.failure.exception_message or ''}"
        )
    if ctx.log_digest:
        parts.append("Log evidence (time order):\n" + "\n".join(ctx.log_digest.splitlines()[:15]))
    traces = [e.text for e in ctx.evidence if e.source == "trace"][:5]
    if traces:
        parts.append("Trace evidence:\n" + "\n".join(traces))
    for p in files:
        ranges = _candidate_ranges(ctx, p, len(texts[p].splitlines()))
        parts.append(f"File {p}:\n{_excerpt(texts[p], ranges)}")
    parts.append("Which file and lines cause the bug, and why?")
    req = ChatRequest.of(
        "\n\n".join(parts), system=JUDGE_SYSTEM, max_tokens=160, json_schema=ROOT_CAUSE_SCHEMA
    )
    try:
        res = await ctx.models.judge.complete(req)
    except ProviderError as exc:
        ctx.note("root_cause", f"judgment call failed ({exc}); using the top-ranked region")
        return fallback
    ans = res.parsed or {}
    path = str(ans.get("file", "")).removeprefix("./")
    try:
        a, b = int(ans["start_line"]), int(ans["end_line"])
    except (KeyError, TypeError, ValueError):
        a = b = 0
    if path not in texts or not (1 <= a <= b <= len(texts[path].splitlines())) or b - a > 40:
        ctx.note(
            "root_cause",
            "the judgment named no valid file and line range; using the top-ranked region",
        )
        return fallback
    return RootCause(
        path,
        a,
        b,
        str(ans.get("explanation", ""))[:400],
        "model",
        tuple(next(r.reasons for r in ctx.ranked if r.path == path)),
    )
