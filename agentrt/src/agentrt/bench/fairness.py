"""`fairness`: do small jobs still finish quickly behind an expensive one?

Twenty small jobs run through one stage on the simulator, first alone,
then just after a job with 50× their work was submitted. With
shortest-expected-work-first between jobs (remaining work estimated from
token math, with aging), the small jobs' p95 latency should barely move.
A third run with plain FIFO order shows what the policy is worth.
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
from agentrt.metrics._recorder import percentile
from agentrt.pipeline import Pipeline, PipelineRunner, Stage, StageContext
from agentrt.queues import FairPolicy, Fifo, ShortestJobFirst, SqliteQueue

__all__ = ["FairnessOptions", "run_fairness_bench"]

OUT_TOKENS = 20


@dataclass(frozen=True, slots=True)
class FairnessOptions:
    small_jobs: int = 20
    small_items: int = 5  # items per small job
    big_factor: int = 50  # the big job has this many times a small job's items
    workers: int = 4
    time_scale: float = 5.0
    aging: float = 0.1  # shortest-expected-work-first's aging


async def _work(ctx: StageContext) -> JsonObject:
    assert ctx.model is not None
    r = await ctx.model.complete(ChatRequest.of(str(ctx.input["text"]), max_tokens=OUT_TOKENS))
    return {"chars": len(r.text)}


async def _run(
    model: OpenAIModel,
    clock: ScaledClock,
    db: Path,
    policy: FairPolicy,
    opts: FairnessOptions,
    *,
    big_factor: int,
) -> list[float]:
    """Small-job latencies (submit to last item done), in simulator seconds."""
    small_jobs, small_items = opts.small_jobs, opts.small_items
    stage = Stage(
        "work", _work, concurrency=opts.workers, model=model, expected_output_tokens=OUT_TOKENS
    )
    p = Pipeline([stage], name="fairness", capacity=100_000)
    q = SqliteQueue(db, clock=clock, policy=policy)
    runner = PipelineRunner(p, q, poll_s=0.5)
    submitted: dict[str, float] = {}
    try:
        async with asyncio.TaskGroup() as tg:
            serving = tg.create_task(runner.run())
            if big_factor:
                for i in range(small_items * big_factor):
                    await runner.submit("big", f"big-{i}", {"text": f"big part {i}"})
            for j in range(small_jobs):
                submitted[f"small{j}"] = clock.now()
                for i in range(small_items):
                    await runner.submit(f"small{j}", f"s{j}-{i}", {"text": f"small {j} part {i}"})
            await runner.drain()
            serving.cancel()
        done: dict[str, float] = {}
        for r in await q.records():
            if r.job in submitted and r.finished_at is not None:
                done[r.job] = max(done.get(r.job, 0.0), r.finished_at)
    finally:
        await q.aclose()
    return [done[j] - t for j, t in submitted.items()]


@benchmark(
    "fairness",
    "p95 latency of 20 small jobs alone vs just behind one job with 50x their work",
    FairnessOptions,
)
async def run_fairness_bench(opts: FairnessOptions) -> BenchResult:
    scale = opts.time_scale
    clock = ScaledClock(scale)
    sjf = ShortestJobFirst(aging=opts.aging)
    big = opts.big_factor
    async with simulated_model(clock, time_scale=scale) as model:
        with tempfile.TemporaryDirectory() as tmp:
            alone = await _run(model, clock, Path(tmp) / "a.db", sjf, opts, big_factor=0)
            with_big = await _run(model, clock, Path(tmp) / "b.db", sjf, opts, big_factor=big)
            fifo = await _run(model, clock, Path(tmp) / "c.db", Fifo(), opts, big_factor=big)
    p_alone = percentile(alone, 95) or 0.0
    p_big = percentile(with_big, 95) or 0.0
    p_fifo = percentile(fifo, 95) or 0.0
    ratio = p_big / p_alone
    return BenchResult(
        name="fairness",
        figures={
            "small_p95_alone_s": round(p_alone, 3),
            "small_p95_with_big_s": round(p_big, 3),
            "small_p95_with_big_fifo_s": round(p_fifo, 3),
            "small_jobs": opts.small_jobs,
            "small_job_items": opts.small_items,
            "big_job_items": opts.small_items * big,
            "workers": opts.workers,
            "time_scale": scale,
        },
        ratios=(
            ("small_p95_with_big_s / small_p95_alone_s", ratio),
            ("FIFO: small_p95_with_big_s / small_p95_alone_s", p_fifo / p_alone),
        ),
        checks=(("small_p95_with_big_s <= 1.25 x small_p95_alone_s", ratio <= 1.25),),
        notes=(
            f"one stage, {opts.workers} workers, one {OUT_TOKENS}-token call per item on the "
            f"'default' simulator profile at time scale {scale:g}, SQLite queue; "
            f"shortest-expected-work-first between jobs with aging {opts.aging}",
        ),
    )
