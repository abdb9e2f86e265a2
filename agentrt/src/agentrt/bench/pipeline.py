"""`pipeline`: one sequential agent vs role-specialized stages, on the simulator.

The document workload: every document is classified, summarized and
tagged, and tagging needs the summary. The sequential agent makes the
three calls for one document after another, then the next document. The
pipeline runs classify and summarize as independent stages with their own
worker pools, and tag after summarize, on the embedded SQLite queue. Both
run against the same simulator server in one run; times are the
simulator's (model) seconds via a :class:`ScaledClock`.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass
from pathlib import Path

from agentrt._clock import ScaledClock
from agentrt._json import JsonObject
from agentrt.bench.harness import BenchResult, benchmark
from agentrt.bench.simproc import simulated_model
from agentrt.llm._openai_backend import OpenAIModel
from agentrt.llm._types import ChatRequest
from agentrt.pipeline import Pipeline, PipelineRunner, Stage, StageContext
from agentrt.queues import SqliteQueue, StageState

__all__ = ["PipelineOptions", "run_pipeline_bench"]

CLASSIFY_TOKENS, SUMMARY_TOKENS, TAG_TOKENS = 4, 40, 8


def _doc(i: int) -> str:
    return f"document {i}: " + "the service restarted after a config change; " * 8


def _classify(doc: str) -> ChatRequest:
    return ChatRequest.of(doc, system="Classify this document.", max_tokens=CLASSIFY_TOKENS)


def _summarize(doc: str) -> ChatRequest:
    return ChatRequest.of(doc, system="Summarize this document.", max_tokens=SUMMARY_TOKENS)


def _tag(summary: str) -> ChatRequest:
    return ChatRequest.of(summary, system="Tag this summary.", max_tokens=TAG_TOKENS)


async def _sequential(model: OpenAIModel, docs: list[str], clock: ScaledClock) -> float:
    start = clock.now()
    for doc in docs:
        await model.complete(_classify(doc))
        summary = (await model.complete(_summarize(doc))).text
        await model.complete(_tag(summary))
    return clock.now() - start


def _stages(model: OpenAIModel, workers: int) -> Pipeline:
    async def classify(ctx: StageContext) -> JsonObject:
        assert ctx.model is not None
        return {"label": (await ctx.model.complete(_classify(str(ctx.input["doc"])))).text}

    async def summarize(ctx: StageContext) -> JsonObject:
        assert ctx.model is not None
        return {"summary": (await ctx.model.complete(_summarize(str(ctx.input["doc"])))).text}

    async def tag(ctx: StageContext) -> JsonObject:
        assert ctx.model is not None
        summary = str(ctx.upstream["summarize"]["summary"])
        return {"tags": (await ctx.model.complete(_tag(summary))).text}

    # summaries take the longest, so that stage gets the most workers
    return Pipeline(
        [
            Stage("classify", classify, concurrency=workers // 2, model=model),
            Stage("summarize", summarize, concurrency=workers * 2, model=model),
            Stage("tag", tag, after=("summarize",), concurrency=workers // 2, model=model),
        ],
        name="documents",
        capacity=4 * workers,
    )


async def _pipelined(
    model: OpenAIModel, docs: list[str], clock: ScaledClock, workers: int, db: Path
) -> tuple[float, int]:
    q = SqliteQueue(db, clock=clock)
    runner = PipelineRunner(_stages(model, workers), q, poll_s=0.5)
    start = clock.now()
    try:
        async with asyncio.TaskGroup() as tg:
            serving = tg.create_task(runner.run())
            for i, doc in enumerate(docs):
                await runner.submit("docs", f"doc{i}", {"doc": doc})
            await runner.drain()
            serving.cancel()
        elapsed = clock.now() - start
        done = sum(1 for r in await q.records() if r.stage == "tag" and r.state is StageState.DONE)
    finally:
        await q.aclose()
    return elapsed, done


@dataclass(frozen=True, slots=True)
class PipelineOptions:
    documents: int = 500
    workers: int = 16  # at least 2; stages get half, twice (summarize) and half of it
    time_scale: float = 4.0
    profile: str = "default"  # the simulator profile
    slots: int = 128  # the simulator's


@benchmark(
    "pipeline",
    "500 documents classified, summarized and tagged: one sequential agent vs parallel stages",
    PipelineOptions,
)
async def run_pipeline_bench(opts: PipelineOptions) -> BenchResult:
    n = opts.documents
    workers = max(2, opts.workers)
    scale = opts.time_scale
    clock = ScaledClock(scale)
    docs = [_doc(i) for i in range(n)]
    overrides = {"slots": opts.slots}
    async with simulated_model(clock, opts.profile, time_scale=scale, overrides=overrides) as model:
        with tempfile.TemporaryDirectory() as tmp:
            pipeline_s, done = await _pipelined(model, docs, clock, workers, Path(tmp) / "q.db")
        sequential_s = await _sequential(model, docs, clock)
    ratio = sequential_s / pipeline_s
    return BenchResult(
        name="pipeline",
        figures={
            "documents": n,
            "time_scale": scale,
            "sequential_s": round(sequential_s, 2),
            "pipeline_s": round(pipeline_s, 2),
            "pipeline_documents_done": done,
            "stage_workers": {
                "classify": workers // 2,
                "summarize": workers * 2,
                "tag": workers // 2,
            },
        },
        ratios=(("sequential_s / pipeline_s", ratio),),
        checks=(
            ("sequential_s / pipeline_s >= 10", ratio >= 10),
            ("every document done", done == n),
        ),
        notes=(
            f"simulator profile {opts.profile!r} with {opts.slots} slots at time scale "
            f"{scale:g}; times are simulator seconds measured by the client; the pipeline ran "
            "on the embedded SQLite queue",
        ),
    )
