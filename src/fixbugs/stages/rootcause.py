"""The root-cause stage: a region chosen from the evidence, explained as it streams.

The root cause is never a place nothing points at. The candidates are the
*suspicious regions* (:mod:`fixbugs.localize.regions`): a function and a
few lines in a top-ranked file, each with the evidence behind it
(traceback frames, SBFL, quoted code, literals, the failing assertion's
values and calls). Without a model, the best region stands with an
explanation built from that evidence.

With a model, the judge reads the bug and the numbered regions with their
code and answers in plain text: the region's id, then why. The answer
streams to the person as it is written (``judgment`` events; the CLI prints
them as they come, the service forwards them over SSE), and is checked
once complete: an answer that names no listed region, or whose explanation
does not talk about the code shown (no identifier of the region in it, too
short, "The file "), is discarded with a note, and the evidence's own
explanation stands.

How far the judge's choice counts is the trust of the endpoint behind the
judge role (:attr:`fixbugs.run.context.Models.judge_trust`). Low (the
embedded model): it may only break ties among regions within 5% of the
best evidence score (:data:`fixbugs.stages.quorum.TIE`). High (a configured
endpoint unless set low): it may choose any listed region, whatever its
evidence, or name a region the evidence did not list when it quotes that
code (:mod:`fixbugs.localize.grounding`), when the judgments asked at once
agree on it (:mod:`fixbugs.stages.quorum`); grounding stays either way.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from agentrt import AgentrtError, BudgetExhausted, Trust
from agentrt.graph import with_deadline
from agentrt.llm import ChatModel, ChatRequest, Completed, TextDelta
from fixbugs.inputs import BugInputs
from fixbugs.localize.assertions import assertion_values
from fixbugs.localize.grounding import ground_named_code, read_named_code
from fixbugs.localize.locate import bug_summary
from fixbugs.localize.rank import RankedFile, rank_files
from fixbugs.localize.regions import Region, suspicious_regions
from fixbugs.localize.signals import tokenize_code
from fixbugs.pyenv.testid import TestId
from fixbugs.pyenv.testrun import parse_test_command
from fixbugs.run.context import RunContext
from fixbugs.run.progress import JudgmentData
from fixbugs.run.record import BugRun, Diagnosis, RootCause
from fixbugs.stages.explain import evidence_explanation, origin_of
from fixbugs.stages.quorum import Judged, settle
from fixbugs.stages.ranked import ranked_event

__all__ = [
    "JUDGE_SYSTEM",
    "JUDGE_SYSTEM_HIGH",
    "QUORUM",
    "check_judgment",
    "region_prompt",
    "root_cause",
    "run_regions",
    "run_root_cause",
]

JUDGE_SYSTEM = (
    "You are a senior engineer finding the root cause of a bug. Use only the evidence "
    "and code given. Choose one of the listed regions and explain, in terms of that code, "
    "why it causes the bug."
)
# trust high: the judge may also name code the evidence did not list, quoting it (the
# low prompt, then that permission: whatever recognises the judge's request by it still does)
JUDGE_SYSTEM_HIGH = (
    JUDGE_SYSTEM + " If the root cause is in code that is not listed, you may name that "
    "code instead, quoting its lines exactly from the repository."
)
TOP_REGIONS = 5
EXCERPT_LINES = 18
_REGION_ID = re.compile(r"\bR\s*(\d{1,2})\b")
_MIN_WORDS = 6


def run_regions(
    inputs: BugInputs, prior: BugRun, ranked: Sequence[RankedFile], files: Mapping[str, str]
) -> list[Region]:
    """The run's top suspicious regions, from ``ranked``, SBFL and the report."""
    failure = prior.analysis.failure
    test_ids = list(failure.failing_tests) if failure else []
    if inputs.test_command:
        command = parse_test_command(inputs.test_command)
        test_ids += [t for t in command.test_ids if TestId.parse(t).names]
    return suspicious_regions(
        files,
        ranked,
        report=inputs.report.text,
        suspicious=prior.sbfl.suspicious,
        test_ids=test_ids,
        limit=TOP_REGIONS,
    )


def _excerpt(text: str, region: Region, context: int = 2) -> str:
    lines = text.splitlines()
    a = max(1, region.start - context)
    b = min(len(lines), region.end + context, a + EXCERPT_LINES - 1)
    return "\n".join(f"{n:5d} | {lines[n - 1]}" for n in range(a, b + 1))


def region_prompt(
    inputs: BugInputs,
    prior: BugRun,
    regions: Sequence[Region],
    files: Mapping[str, str],
    *,
    trust: Trust = "low",
) -> str:
    """The judge's prompt: the bug, its evidence, and the numbered regions with code
    (trust high: and how to name a region that is not listed)."""
    report = inputs.report
    a = prior.analysis
    parts = [f"Bug report: {report.title}"]
    if a.failure is not None:
        summary = bug_summary(report.title + "\n" + report.body, a.failure)
        parts.append("\n".join(summary.splitlines()[1:]) or "")
    values = assertion_values(report.text)
    if values:
        parts.append(f"Failing assertion: got {values[0].actual}, expected {values[0].expected}")
    if a.log_digest:
        parts.append("Log evidence (time order):\n" + "\n".join(a.log_digest.splitlines()[:15]))
    traces = [e.text for e in a.evidence if e.source == "trace"][:5]
    if traces:
        parts.append("Trace evidence:\n" + "\n".join(traces))
    for i, r in enumerate(regions, 1):
        where = f"function {r.function}" if r.function else "module-level code"
        parts.append(
            f"R{i}: {r.path}, {where}, lines {r.start}-{r.end} — evidence: "
            + "; ".join(r.reasons[:3])
            + "\n"
            + _excerpt(files[r.path], r)
        )
    parts.append(
        "Which region holds the root cause? Answer in plain text. First line: the region id "
        "only (for example R1). Then one to three sentences on what in that code causes the "
        "bug, naming the variables, calls or conditions involved."
    )
    if trust == "high":
        parts.append(
            "If the root cause is in code that is not listed, the first line names its file "
            "and function instead (for example: pkg/module.py, function name); then the "
            "faulty lines copied exactly from that file, each on its own line starting "
            "with '> '; then the sentences."
        )
    return "\n\n".join(p for p in parts if p)


def check_judgment(
    answer: str, regions: Sequence[Region], files: Mapping[str, str], *, trust: Trust = "low"
) -> tuple[Region | None, str, str | None]:
    """(region, explanation, why rejected): the answer's region must be listed (trust
    high: or be grounded by its quoted code) and its explanation must talk about that
    region's code."""
    text = answer.strip()
    head = " ".join(text.split())[:60]
    m = _REGION_ID.search(text[:120])
    if m is not None and 1 <= int(m.group(1)) <= len(regions):
        index, rest = int(m.group(1)), text[m.end() :]
    else:
        named = _named_region(text, regions)  # "path, function f" instead of an id
        if trust == "high":
            # a quote places the root cause more exactly than a path: "pkg/a.py, line 40"
            # and a quote of line 40 is that line's function, not pkg/a.py's listed
            # module-level region
            code = read_named_code(text, files.keys())
            grounded, why = ground_named_code(code, files)
            if grounded is not None:
                return _quoted(grounded, code.explanation[:400], regions, files)
            # inline spans may be mere names: only a failed block quote overrules a name
            if named is None or code.quoted:
                return None, "", f"{why} (it began {head!r})"
        if named is None:
            return None, "", f"the judgment named no listed evidence region (it began {head!r})"
        index, rest = named, text.split("\n", 1)[1] if "\n" in text else text
    region = regions[index - 1]
    explanation = " ".join(rest.lstrip(" :.-—)]\n").split())[:400]
    return _described(region, explanation, files, f"R{index}")


def _quoted(
    grounded: Region, explanation: str, regions: Sequence[Region], files: Mapping[str, str]
) -> tuple[Region | None, str, str | None]:
    """The region the answer's quote grounds: the listed one it falls in (with that
    region's evidence), else itself. The quote is in its code, so the explanation needs
    no word of that code besides (a regular expression's line has none)."""
    listed = next(
        (
            r
            for r in regions
            if r.path == grounded.path
            and r.function == grounded.function
            and r.start <= grounded.end
            and grounded.start <= r.end
        ),
        None,
    )
    region = listed or grounded
    where = f"{region.path}:{region.start}-{region.end}"
    return _described(region, explanation, files, where, grounded=True)


def _described(
    region: Region,
    explanation: str,
    files: Mapping[str, str],
    label: str,
    *,
    grounded: bool = False,
) -> tuple[Region | None, str, str | None]:
    """``region`` with ``explanation`` when it talks about the region's code (``grounded``:
    the answer quoted that code, so only its length is checked)."""
    code = "\n".join(files[region.path].splitlines()[region.start - 1 : region.end])
    code_words = {w for w in tokenize_code(code) if len(w) >= 3}
    said = set(tokenize_code(explanation))
    if len(explanation.split()) < _MIN_WORDS or not (grounded or code_words & said):
        shown = explanation[:60] or "nothing"
        return (
            None,
            "",
            f"the judgment's explanation does not describe the code of {label} ({shown!r})",
        )
    return region, explanation, None


def _named_region(text: str, regions: Sequence[Region]) -> int | None:
    """The 1-based index of the one listed region whose path and function the answer's
    first line names, or None (no region, or several)."""
    head = text.split("\n", 1)[0].lower()

    def names(word: str) -> bool:  # whole words: "subtotal" does not name "total"
        return re.search(rf"(?<![\w.]){re.escape(word.lower())}(?!\w)", head) is not None

    hits = [
        i
        for i, r in enumerate(regions, 1)
        if r.path.lower() in head and (r.function is None or names(r.function))
    ]
    return hits[0] if len(hits) == 1 else None


async def _stream_judgment(ctx: RunContext, judge: ChatModel, req: ChatRequest) -> str:
    """Run the judge as a stream; every piece goes to the person as it arrives."""
    pieces: list[str] = []
    try:
        async for ev in judge.stream(req):
            if isinstance(ev, TextDelta) and ev.text:
                pieces.append(ev.text)
                ctx.journal.emit("judgment", "root_cause", ev.text, JudgmentData(delta=ev.text))
            elif isinstance(ev, Completed) and not pieces:
                pieces.append(ev.result.text)
    finally:
        if pieces:
            ctx.journal.emit("judgment", "root_cause", "", JudgmentData(done=True))
    return "".join(pieces)


QUORUM = 2  # trust high: judgments asked at once; an overrule of the evidence needs them all
SECOND_TEMPERATURE = 0.7  # the batch judgment is a sample, not the greedy answer again


async def _second_judgment(judge: ChatModel, req: ChatRequest) -> str:
    """A judgment nobody watches: a batch call."""
    return (await judge.complete(req)).text


async def _judgments(
    ctx: RunContext, judge: ChatModel, req: ChatRequest, n: int
) -> list[str | AgentrtError]:
    """``n`` answers to ``req`` asked at once, the first streamed to the person; a call
    that fails is its error (the others still count)."""
    calls = [_stream_judgment(ctx, judge, req)]
    for i in range(1, n):
        calls.append(_second_judgment(judge, replace(req, temperature=SECOND_TEMPERATURE, seed=i)))
    got = await asyncio.gather(*calls, return_exceptions=True)
    for g in got:  # a budget that ran out ends the model work; anything else is a bug
        if isinstance(g, BudgetExhausted) or not isinstance(g, str | AgentrtError):
            raise g
    return [g for g in got if isinstance(g, str | AgentrtError)]


async def root_cause(
    inputs: BugInputs, prior: BugRun, ctx: RunContext, regions: Sequence[Region]
) -> RootCause | None:
    """The root cause: the best evidence region, or the judge's grounded choice.

    Trust high asks :data:`QUORUM` judgments at once (the same latency, that many
    times the judge's tokens): an overrule of stronger evidence stands only when
    they all name the same place (:func:`fixbugs.stages.quorum.settle`).
    """
    if not regions:
        return None
    best = regions[0]
    # the explanations and the prompt read the report again: in a worker thread
    fallback = RootCause(
        best.path,
        best.start,
        best.end,
        await asyncio.to_thread(evidence_explanation, best, inputs, prior),
        origin_of(prior, best),
        best.reasons,
        best.function,
    )
    judge = ctx.step_model("judgment")
    if judge is None:
        return fallback
    files = ctx.files()
    trust = ctx.models.judge_trust if ctx.models else "low"
    prompt = await asyncio.to_thread(region_prompt, inputs, prior, regions, files, trust=trust)
    req = ChatRequest.of(
        prompt,
        system=JUDGE_SYSTEM_HIGH if trust == "high" else JUDGE_SYSTEM,
        max_tokens=300 if trust == "high" else 200,  # room for a quote
        stage="root_cause",
    )
    try:
        answers = await with_deadline(
            ctx.clock,
            ctx.step_deadline_s("judgment"),
            _judgments(ctx, judge, req, QUORUM if trust == "high" else 1),
            what="judgment",
        )
    except BudgetExhausted:
        return fallback  # the budget's own note says the model work ended
    except AgentrtError as exc:
        answers = [exc]
    judged = [
        Judged(None, "", f"the judgment call failed ({a})")
        if isinstance(a, AgentrtError)
        else Judged(*await asyncio.to_thread(check_judgment, a, regions, files, trust=trust))
        for a in answers
    ]
    settled = settle(judged, regions, may_overrule=trust == "high")
    for note in settled.notes:
        ctx.journal.note("root_cause", note)
    chosen = settled.judged
    if chosen is None or chosen.region is None:
        ctx.journal.note("root_cause", "the evidence's explanation stands")
        return fallback
    region = chosen.region
    return RootCause(
        region.path,
        region.start,
        region.end,
        chosen.explanation,
        "model",
        region.reasons,
        region.function,
    )


async def run_root_cause(inputs: BugInputs, prior: BugRun, ctx: RunContext) -> Diagnosis:
    """Rank on all evidence (static, SBFL, model relevance), then judge the root cause."""
    files = ctx.files()
    # only files of the repository listing (coverage may name others)
    ranked = [r for r in rank_files(prior.file_evidence()) if r.path in files]
    ranked_event(ctx, "root_cause", "ranked files (static, SBFL and model relevance)", ranked)
    # the regions read the report (quoted code, literals, assertions): off the event loop
    regions = await asyncio.to_thread(run_regions, inputs, prior, ranked, files)
    rc = await root_cause(inputs, prior, ctx, regions)
    if rc is not None:
        ctx.journal.emit(
            "root_cause",
            "root_cause",
            f"{rc.path}:{rc.start}-{rc.end} ({rc.origin}): {rc.explanation}",
            rc.event_data(),
        )
    return Diagnosis(ranked=tuple(ranked), regions=tuple(regions), root_cause=rc)
