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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentrt._clock import ScaledClock
from agentrt.bench.harness import BenchResult, benchmark
from agentrt.bench.simproc import simulated_model
from agentrt.llm._openai_backend import OpenAIModel
from agentrt.llm._types import ChatRequest
from agentrt.metrics._recorder import percentile
from agentrt.pipeline import Pipeline, PipelineRunner, Stage, StageContext
from agentrt.queues import FairPolicy, Fifo, ShortestJobFirst, SqliteQueue

__all__ = ["run_fairness_bench"]

OUT_TOKENS = 20


async def _work(ctx: StageContext) -> Mapping[str, Any]:
    assert ctx.model is not None
    r = await ctx.model.complete(ChatRequest.of(ctx.input["text"], max_tokens=OUT_TOKENS))
    return {"chars": len(r.text)}


async def _run(
    model: OpenAIModel,
    clock: ScaledClock,
    db: Path,
    policy: FairPolicy,
    *,
    workers: int,
    small_jobs: int,
    small_items: int,
    big_factor: int,
) -> list[float]:
    """Small-job latencies (submit to last item done), in simulator seconds."""
    stage = Stage(
        "work", _work, concurrency=workers, model=model, expected_output_tokens=OUT_TOKENS
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
    small_jobs=20,
    small_items=5,
    big_factor=50,
    workers=4,
    time_scale=5.0,
    aging=0.1,
)
async def run_fairness_bench(opts: dict[str, Any]) -> BenchResult:
    scale = float(opts["time_scale"])
    clock = ScaledClock(scale)
    kw = {
        "workers": int(opts["workers"]),
        "small_jobs": int(opts["small_jobs"]),
        "small_items": int(opts["small_items"]),
    }
    sjf = ShortestJobFirst(aging=float(opts["aging"]))
    big = int(opts["big_factor"])
    async with simulated_model(clock, time_scale=scale) as model:
        with tempfile.TemporaryDirectory() as tmp:
            alone = await _run(model, clock, Path(tmp) / "a.db", sjf, big_factor=0, **kw)
            with_big = await _run(model, clock, Path(tmp) / "b.db", sjf, big_factor=big, **kw)
            fifo = await _run(model, clock, Path(tmp) / "c.db", Fifo(), big_factor=big, **kw)
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
            "small_jobs": kw["small_jobs"],
            "small_job_items": kw["small_items"],
            "big_job_items": kw["small_items"] * big,
            "workers": kw["workers"],
            "time_scale": scale,
        },
        ratios=(
            ("small_p95_with_big_s / small_p95_alone_s", ratio),
            ("FIFO: small_p95_with_big_s / small_p95_alone_s", p_fifo / p_alone),
        ),
        checks=(("small_p95_with_big_s <= 1.25 x small_p95_alone_s", ratio <= 1.25),),
        notes=(
            f"one stage, {kw['workers']} workers, one {OUT_TOKENS}-token call per item on the "
            f"'default' simulator profile at time scale {scale:g}, SQLite queue; "
            f"shortest-expected-work-first between jobs with aging {opts['aging']}",
        ),
    )
