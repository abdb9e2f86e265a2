"""Model relevance: scatter-gather over candidate files, one model call per chunk.

The top-N candidates from static signals are packed, whole files in rank
order, into chunks under a token budget (:func:`agentrt.chunking.chunk_code`);
each chunk is one structured call asking which of its files relate to the
bug; calls run concurrently through :func:`agentrt.graph.gather_map` and
their answers merge back into :class:`FileEvidence` of kind ``model``. A failed
or malformed answer costs that chunk's opinion, never the run: the model is
advisory (see :mod:`fixbugs.localize.rank`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from agentrt import BudgetExhausted, Clock, SystemClock
from agentrt.chunking import CodeChunk, chunk_code
from agentrt.context import PromptLayout
from agentrt.graph import DeadlineExceeded, Outcome, scatter, with_deadline
from agentrt.llm import ChatModel
from fixbugs.localize.evidence import FileEvidence

__all__ = [
    "RELEVANCE_SYSTEM",
    "FileVerdict",
    "RelevanceAnswer",
    "RelevanceResult",
    "chunk_question",
    "layout_for",
    "model_relevance",
]


class FileVerdict(BaseModel):
    """The model's opinion of one file of a chunk."""

    path: str
    relevant: bool
    reason: str


class RelevanceAnswer(BaseModel):
    """The structured answer about one chunk (its JSON schema constrains the model)."""

    files: list[FileVerdict]


RELEVANCE_SYSTEM = (
    "You are a debugging assistant. Given a bug report and some source files, "
    "say for each file whether the bug is likely in it. Answer in JSON."
)


@dataclass(frozen=True, slots=True)
class RelevanceResult:
    evidence: tuple[FileEvidence, ...]
    calls: int
    failures: int
    notes: tuple[str, ...] = ()


def layout_for(bug_summary: str) -> PromptLayout:
    """What every call of the scatter shares, first and byte-identical: the
    system prompt and the bug. A serving engine's prefix cache then computes
    it once; only each chunk's files are new prefill."""
    return PromptLayout.of(RELEVANCE_SYSTEM, [("Bug report", bug_summary)])


def chunk_question(chunk: CodeChunk) -> str:
    """The varying part of one call: its files and the question about them."""
    listed = ", ".join(chunk.paths)
    return (
        f"Source files:\n{chunk.render()}\n\n"
        f"For each of these files ({listed}) answer: is the bug likely in it? "
        'Reply as {"files": [{"path": ..., "relevant": true|false, "reason": ...}]}.'
    )


def _answers(answer: RelevanceAnswer, paths: Sequence[str]) -> list[FileEvidence]:
    """Only answers about files that were in the chunk count (a model may invent paths).

    A chunk of one file answered with one item is about that file, whatever
    path the model wrote (small models garble paths).
    """
    allowed = set(paths)
    out: list[FileEvidence] = []
    single = len(paths) == 1 and len(answer.files) == 1
    for item in answer.files:
        path = paths[0] if single else item.path.strip().removeprefix("./")
        if path in allowed and item.relevant:
            reason = " ".join(item.reason.split())[:160]
            out.append(FileEvidence(path, "model", 1.0, f"model: {reason or 'judged relevant'}"))
            allowed.discard(path)  # invariant: one opinion per file per chunk
    return out


async def model_relevance(
    client: ChatModel,
    bug_summary: str,
    candidates: Sequence[str],
    files: Mapping[str, str],
    *,
    budget_tokens: int = 1500,
    max_chunks: int = 4,
    concurrency: int = 4,
    max_tokens: int = 200,
    deadline_s: float | None = None,
    clock: Clock | None = None,
    stage: str = "file_relevance",
) -> RelevanceResult:
    """Judge ``candidates`` (paths into ``files``, best first) in chunks, concurrently.

    At most ``max_chunks`` calls are made (the best candidates' chunks). With
    ``deadline_s``, answers that arrived in time are kept and the rest are
    dropped with a note: the model's opinion is worth a bounded wait only.
    """
    pairs = [(p, files[p]) for p in candidates if p in files]
    if not pairs:
        return RelevanceResult((), 0, 0, ("no candidate files for the model",))
    chunks = chunk_code(pairs, budget_tokens)[:max_chunks]

    layout = layout_for(bug_summary)

    async def judge(chunk: CodeChunk) -> list[FileEvidence]:
        req = layout.request(
            chunk_question(chunk),
            max_tokens=max_tokens,
            output_type=RelevanceAnswer,
            stage=stage,
        )
        result = await client.complete(req)
        return _answers(result.output(RelevanceAnswer), chunk.paths)

    outcomes: list[Outcome[CodeChunk, list[FileEvidence]]] = []

    async def gather() -> None:
        async with scatter(judge, chunks, limit=concurrency, on_error="collect") as results:
            async for o in results:
                outcomes.append(o)  # kept even if the deadline cancels the rest

    notes: list[str] = []
    if deadline_s is None:
        await gather()
    else:
        try:
            await with_deadline(
                clock or SystemClock(), deadline_s, gather(), what="model relevance"
            )
        except DeadlineExceeded:
            notes.append(
                f"model relevance stopped at its {deadline_s:g} s deadline: "
                f"{len(outcomes)} of {len(chunks)} chunks answered"
            )
    outcomes.sort(key=lambda o: o.index)
    evidence = [e for o in outcomes if o.ok and o.value for e in o.value]
    # a call the run's spend budget refused is no failure: the budget's one note says it
    failures = [o for o in outcomes if not o.ok and not isinstance(o.error, BudgetExhausted)]
    notes += [
        f"model relevance call failed for {', '.join(o.item.paths)}: {type(o.error).__name__}"
        for o in failures
    ]
    return RelevanceResult(tuple(evidence), len(chunks), len(failures), tuple(notes))
