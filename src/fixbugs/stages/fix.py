"""The fix stage: ranked repair candidates at the top suspicious regions.

Candidates come from :mod:`fixbugs.repair`: fix templates (TBar/PraPR
families), ingredients found elsewhere in the repository, the model's
rewrite of the root-cause lines, and pairs of edits in one file. Sources are
read from the pristine baseline (never from a copy a test ran in).
Candidates that do not parse are dropped here; none is trusted, every one
goes through staged validation. So none is generated when validation
cannot run (:func:`fixbugs.stages.sources.can_validate`): a candidate nothing can check is only
time spent (hundreds of them on a large repository) for no claim. Where
the model's rewrite may edit, and whether it leads, is the judge's trust
(:mod:`fixbugs.stages.model_scope`).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from agentrt import AgentrtError, BudgetExhausted
from agentrt.graph import with_deadline
from agentrt.llm import ChatModel, ChatRequest, Completed, TextDelta
from fixbugs.diffs import diff_hunks
from fixbugs.index import RepoIndex, is_test_path
from fixbugs.inputs import BugInputs
from fixbugs.repair import (
    Edit,
    IngredientIndex,
    Region,
    RepairCandidate,
    SourceFile,
    generate_candidates,
    parse_hints,
    rank,
    test_literals,
)
from fixbugs.repair.edits import EDIT_FORMATS, AppliedEdits, EditRejected, apply_edits, parse_edits
from fixbugs.repair.hints import FailureHints
from fixbugs.repair.naturalness import naturalness_factors
from fixbugs.run.context import RunContext
from fixbugs.run.record import BugRun, FixProposal, RootCause
from fixbugs.stages.model_scope import model_first, rewrite_refusal, rewrite_roots
from fixbugs.stages.repair_scope import (
    Span,
    fix_regions,
    more_regions,
    repair_regions,
    spectrum_top,
)
from fixbugs.stages.sources import Sources, can_validate, test_sources

__all__ = [
    "NOT_REPRODUCED",
    "fix_regions",
    "propose_fixes",
    "repair_regions",
    "rewrite_prompt",
    "run_fix",
    "spectrum_top",
]

NOT_REPRODUCED = (
    "no candidate fix generated: the bug was not reproduced, so no fix could be validated"
)


FIX_SYSTEM = (
    "You fix bugs with the smallest possible change. You answer with the change only, "
    "written in exactly one of the edit forms the request describes."
)


def _numbered(text: str, start: int, end: int, context: int = 4) -> str:
    lines = text.splitlines()
    lo, hi = max(1, start - context), min(len(lines), end + context)
    return "\n".join(f"{n:5d} | {lines[n - 1]}" for n in range(lo, hi + 1))


# -- the model's rewrite: its answer parsed strictly (fixbugs.repair.edits) ------------


def rewrite_prompt(inputs: BugInputs, rc: RootCause, text: str) -> str:
    """The rewrite request: the root cause, its code, and the edit forms the answer must use."""
    return (
        f"Bug report title: {inputs.report.title}\n"
        f"Root cause: {rc.explanation}\n\n"
        f"File {rc.path}, lines {rc.start}-{rc.end} are at fault "
        "(line numbers and '|' are not part of the file):\n"
        f"{_numbered(text, rc.start, rc.end, context=10)}\n\n"
        f"Fix the bug.\n{EDIT_FORMATS}"
    )


async def _streamed(model: ChatModel, req: ChatRequest) -> str:
    """The model's whole answer, streamed (so the stage's TTFT is measured)."""
    pieces: list[str] = []
    async for ev in model.stream(req):
        if isinstance(ev, TextDelta):
            pieces.append(ev.text)
        elif isinstance(ev, Completed) and not pieces:
            pieces.append(ev.result.text)
    return "".join(pieces)


async def _model_rewrite(
    inputs: BugInputs, prior: BugRun, ctx: RunContext, sources: Sources
) -> AppliedEdits | None:
    """The model's rewrite, applied in memory; None (with a note) when it has none or it
    does not apply: the reason (search text not found, diff context mismatch, ...) is
    the rejected candidate's record in the report's notes."""
    rc = prior.root_cause
    model = ctx.step_model("rewrite")
    if rc is None or model is None:
        return None
    text = sources.text(rc.path)
    if text is None:
        return None
    req = ChatRequest.of(
        rewrite_prompt(inputs, rc, text), system=FIX_SYSTEM, max_tokens=4096, stage="fix"
    )
    try:
        answer = await with_deadline(
            ctx.clock, ctx.step_deadline_s("rewrite"), _streamed(model, req), what="rewrite"
        )
    except BudgetExhausted:
        return None  # the budget's own note says the model work ended
    except AgentrtError as exc:
        ctx.journal.note("fix", f"model fix proposal failed: {exc}")
        return None
    try:
        return apply_edits(parse_edits(answer), sources.text)
    except EditRejected as exc:
        ctx.journal.note("fix", f"model rewrite rejected: {exc}")
        return None


def _model_candidates(
    rewrite: AppliedEdits | None, prior: BugRun, ctx: RunContext
) -> tuple[list[tuple[Edit, float]], list[RepairCandidate]]:
    """The rewrite as candidates: one file is an engine ``Edit`` (ranked like the others),
    several files one candidate of their joint diff (``why`` says which files).

    Where it may stand is the judge's trust (:mod:`fixbugs.stages.model_scope`).
    """
    rc = prior.root_cause
    if rewrite is None or rc is None:
        return [], []
    trust = ctx.models.judge_trust if ctx.models else "low"
    refused = rewrite_refusal(
        diff_hunks(rewrite.diff),
        rewrite_roots(prior),  # low trust holds the rewrite to the first, the root cause
        trust,
        ctx.files(),
        ctx.options.slack_lines,
    )
    if refused is not None:
        ctx.journal.note("fix", f"model rewrite dropped: {refused}")
        return [], []
    why = f"model rewrite ({rewrite.format})"
    if len(rewrite.files) == 1:
        f = rewrite.files[0]
        return [
            (Edit(f.path, f.start, f.end, f.new, "model", f"{why} of {f.start}-{f.end}"), 1.0)
        ], []
    joint = RepairCandidate.from_diff(
        -1, rewrite.diff, "model", f"{why} of {', '.join(rewrite.paths)}"
    )
    return [], [joint]


def _repair_regions(
    inputs: BugInputs,
    prior: BugRun,
    ctx: RunContext,
    files: RepoIndex,
    sources: Sources,
) -> tuple[list[Span], list[Span], FailureHints, IngredientIndex]:
    """The regions a repair edits (ranked, the spectrum's best), the hints the report and
    the reproduction's output give, and the repository's ingredients (its index's)."""
    ranked = repair_regions(prior, files)
    n = max(1, ctx.options.repair_regions)
    # the root cause's file is the likeliest home of the fix: its other suspicious
    # regions come along even when other files' regions rank above them
    regions = ranked[:n] + [r for r in ranked[n:] if ranked and r[0] == ranked[0][0]][:4]
    best = spectrum_top(prior, files)
    regions += [r for r in best if not any(r[:3] == x[:3] for x in regions)]
    repro = prior.reproduction
    # the failing tests' sections first: a tail may hold only a warnings summary
    run_text = (repro.failure_text + "\n" + repro.output_tail) if repro else ""
    output = "\n".join(x for x in (inputs.report.body, run_text) if x.strip())
    hints = parse_hints(output)
    # the files already suspected (the ranked files' top ten, the regions'): those whose
    # code the added regions read; the rest of the repository is read as ingredients
    suspected = {f.path for f in prior.ranked[:10]} | {r[0] for r in regions}
    suspected_sources = [
        SourceFile(p, files[p])
        for p in sorted(suspected)
        if p in files and p.endswith(".py") and not is_test_path(p)
    ]
    rc = prior.root_cause
    root_text = sources.text(rc.path) if rc is not None else None
    regions += more_regions(
        prior, regions, files, suspected_sources, run_text, root_text, parse_hints(run_text).keys
    )
    return regions, best, hints, IngredientIndex(files.ingredients())


async def propose_fixes(
    inputs: BugInputs, prior: BugRun, ctx: RunContext, *, baseline: Path | None = None
) -> list[RepairCandidate]:
    """Ranked candidates (best first), each with its id, as validation will run them.

    Sources come from ``baseline`` (the workspace's pristine tree) when
    given, else from the input tree (see :class:`Sources`).
    """
    files = ctx.files()
    sources = Sources(files, baseline)
    # the report and the test output are hostile text, and the regions read the
    # repository's code: CPU work, in a worker thread (the event loop serves other jobs)
    regions, best, hints, ingredients = await asyncio.to_thread(
        _repair_regions, inputs, prior, ctx, files, sources
    )
    ctx.journal.note(
        "fix",
        "repair regions: " + ", ".join(f"{p}:{a}-{b} ({s:.2f})" for p, a, b, s in regions[:10]),
    )
    texts: dict[str, str] = {}
    for path, *_ in regions:
        text = sources.text(path)
        if text is not None:
            texts[path] = text
    rewrite = await _model_rewrite(inputs, prior, ctx, sources)
    extra, joint = _model_candidates(rewrite, prior, ctx)
    for edit, _ in extra:
        texts.setdefault(edit.path, sources.text(edit.path) or "")
    cands = await asyncio.to_thread(
        lambda: generate_candidates(
            [Region(p, a, b, s) for p, a, b, s in regions],
            texts,
            hints,
            ingredients=ingredients,
            test_literals=test_literals(test_sources(prior, sources)),
            extra=extra,
            hot_lines=[(p, ln) for p, a, b, _ in best for ln in range(a, b + 1)],
        )
    )
    if joint:  # a rewrite of several files: ids after the engine's, ranked with them
        top = max((c.id for c in cands), default=-1)
        cands = rank([*cands, *(replace(c, id=top + 1 + i) for i, c in enumerate(joint))])
    cands = [c for c in cands if not any(is_test_path(h.path) for h in diff_hunks(c.diff))]
    cands = await _with_naturalness(ctx, cands, texts)
    # a judge trusted high: its rewrite of the root cause is tried first
    cands = model_first(cands, ctx.models.judge_trust if ctx.models else "low")
    return cands[: ctx.options.max_candidates]


async def _with_naturalness(
    ctx: RunContext, cands: list[RepairCandidate], texts: dict[str, str]
) -> list[RepairCandidate]:
    """Re-rank the top candidates by the embedded model's naturalness (when there is one)."""
    model = ctx.step_model("naturalness")
    if model is None or not cands:
        return cands
    try:
        factors = await with_deadline(
            ctx.clock,
            ctx.step_deadline_s("naturalness"),
            naturalness_factors(model, cands, texts),
            what="naturalness",
        )
    except Exception as exc:  # optional signal: a scoring failure never blocks the repair
        ctx.journal.note("fix", f"naturalness scoring skipped: {exc}")
        return cands
    if not factors:
        return cands
    ctx.journal.note(
        "fix", f"naturalness scored {len(factors)} top candidate(s) with the embedded model"
    )
    return rank(cands, lambda c: factors.get(c.id))


async def run_fix(
    inputs: BugInputs, prior: BugRun, ctx: RunContext, *, baseline: Path | None = None
) -> FixProposal:
    """Candidate fixes, written against the pristine sources (no workspace needed).

    The sources come from ``baseline`` (the workspace's pristine tree) when
    the driver has one, else from the input tree, so the staged driver runs
    this in its model stage, where waiting on the model's rewrite holds no core.

    Without a reproduction validation can rerun, it proposes nothing and
    says so in the report's notes: no fix could be validated.
    """
    if not can_validate(prior.reproduction):
        ctx.journal.note("fix", NOT_REPRODUCED)
        return FixProposal()
    candidates = await propose_fixes(inputs, prior, ctx, baseline=baseline)
    ctx.journal.emit(
        "note",
        "fix",
        f"{len(candidates)} candidate fix(es) limited to the localized region",
    )
    return FixProposal(candidates=tuple(candidates))
