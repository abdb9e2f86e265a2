"""The pipeline API on the in-memory backend, on a FakeClock."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from agentrt._clock import FakeClock
from agentrt._errors import UserError
from agentrt.pipeline import Pipeline, PipelineRunner, Stage, StageContext
from agentrt.queues import MemoryQueue, StageState


def sleeper(seconds: float, out: str) -> Any:
    async def run(ctx: StageContext) -> Mapping[str, Any]:
        await ctx.clock.sleep(seconds)
        return {out: f"{out}({ctx.input['text']})", "seen": sorted(ctx.upstream)}

    return run


def docs_pipeline(**kw: Any) -> Pipeline:
    return Pipeline(
        [
            Stage("tag", sleeper(1.0, "tags"), after=("summarize",), concurrency=4),
            Stage("classify", sleeper(1.0, "label"), concurrency=4),
            Stage("summarize", sleeper(2.0, "summary"), concurrency=4),
        ],
        **kw,
    )


async def test_dag_runs_each_stage_once_with_upstream_results() -> None:
    clock = FakeClock()
    q = MemoryQueue(clock=clock)
    runner = PipelineRunner(docs_pipeline(), q)
    async with clock.autojumping():
        for i in range(8):
            await runner.submit("job", f"d{i}", {"text": f"t{i}"})
        await runner.run(until_idle=True)
    res = await q.results("d3", ["classify", "summarize", "tag"])
    assert res["tag"]["seen"] == ["summarize"]
    assert res["summarize"]["summary"] == "summary(t3)"
    assert res["classify"]["seen"] == []
    recs = await q.records()
    assert len(recs) == 24
    assert all(r.state is StageState.DONE and r.attempts == 1 for r in recs)
    # 8 items, 4 slots a stage: summarize 2 waves of 2 s, then tag 1 s after
    assert clock.now() == pytest.approx(5.0)
    assert runner.completed == 24 and runner.duplicates == 0


async def test_tag_reads_the_summary_it_depends_on() -> None:
    clock = FakeClock()
    q = MemoryQueue(clock=clock)

    async def tag(ctx: StageContext) -> Mapping[str, Any]:
        return {"tags": ctx.upstream["summarize"]["summary"].upper()}

    async def summarize(ctx: StageContext) -> Mapping[str, Any]:
        return {"summary": ctx.input["text"] + "!"}

    p = Pipeline([Stage("summarize", summarize), Stage("tag", tag, after=("summarize",))])
    runner = PipelineRunner(p, q)
    async with clock.autojumping():
        await runner.submit("j", "x", {"text": "hi"})
        await runner.run(until_idle=True)
    assert await q.results("x", ["tag"]) == {"tag": {"tags": "HI!"}}


async def test_join_stage_waits_for_all_inputs_and_runs_once() -> None:
    clock = FakeClock()
    q = MemoryQueue(clock=clock)
    calls: list[str] = []

    async def report(ctx: StageContext) -> Mapping[str, Any]:
        calls.append(ctx.item)
        return {"inputs": sorted(ctx.upstream)}

    p = Pipeline(
        [
            Stage("a", sleeper(1.0, "a")),
            Stage("b", sleeper(3.0, "b")),
            Stage("report", report, after=("a", "b")),
        ]
    )
    runner = PipelineRunner(p, q)
    async with clock.autojumping():
        await runner.submit("j", "x", {"text": ""})
        await runner.run(until_idle=True)
    assert calls == ["x"]
    assert (await q.results("x", ["report"]))["report"] == {"inputs": ["a", "b"]}


async def test_failing_stage_is_retried_then_dead_lettered_with_records() -> None:
    clock = FakeClock()
    q = MemoryQueue(clock=clock, max_deliveries=3)
    tries: dict[str, int] = {}

    async def flaky(ctx: StageContext) -> Mapping[str, Any]:
        tries[ctx.item] = tries.get(ctx.item, 0) + 1
        await ctx.clock.sleep(1.0)
        if ctx.item == "never" or ctx.attempt < 2:
            raise RuntimeError(f"attempt {ctx.attempt}")
        return {"ok": ctx.attempt}

    runner = PipelineRunner(Pipeline([Stage("s", flaky)]), q)
    async with clock.autojumping():
        await runner.submit("j", "once", {})
        await runner.submit("j", "never", {})
        await runner.run(until_idle=True)
    recs = {r.item: r for r in await q.records()}
    assert recs["once"].state is StageState.DONE and recs["once"].attempts == 2
    assert recs["never"].state is StageState.DEAD and recs["never"].attempts == 3
    assert recs["never"].error == "RuntimeError: attempt 3"
    assert tries == {"once": 2, "never": 3}
    assert [m.item for m in q.dead] == ["never"]
    assert recs["once"].run_s == pytest.approx(1.0)


async def test_stalled_downstream_bounds_memory_and_pauses_upstream() -> None:
    clock = FakeClock()
    q = MemoryQueue(clock=clock)
    release = asyncio.Event()
    started: list[str] = []

    async def upstream(ctx: StageContext) -> Mapping[str, Any]:
        started.append(ctx.item)
        await ctx.clock.sleep(0.1)
        return {}

    async def stalled(ctx: StageContext) -> Mapping[str, Any]:
        await release.wait()
        return {}

    cap, up_slots, down_slots = 5, 3, 2
    p = Pipeline(
        [
            Stage("up", upstream, concurrency=up_slots),
            Stage("down", stalled, after=("up",), concurrency=down_slots),
        ],
        capacity=cap,
    )
    runner = PipelineRunner(p, q)
    submitted: list[int] = []

    async def produce() -> None:
        for i in range(1000):
            await runner.submit("j", f"i{i}", {})
            submitted.append(i)

    async with clock.autojumping(), asyncio.TaskGroup() as tg:
        work = tg.create_task(runner.run(until_idle=True))
        prod = tg.create_task(produce())
        # let the autojumping clock run a long (simulated) time with down stalled
        await clock.sleep(120.0)
        down_depth = await q.depth("down")
        up_depth = await q.depth("up")
        # the stalled queue holds at most its capacity plus one per upstream slot
        assert cap <= down_depth <= cap + up_slots
        assert up_depth <= cap
        # upstream paused: it did only what fits downstream, the producer waits
        assert len(started) <= cap + up_slots
        assert len(submitted) <= len(started) + cap
        assert not prod.done()
        assert await q.pending() <= 2 * cap + up_slots
        release.set()
        await prod
        await work
    assert len(submitted) == 1000
    assert all(r.state is StageState.DONE for r in await q.records())


async def test_serialized_stage_runs_one_item_per_key_at_a_time() -> None:
    clock = FakeClock()
    q = MemoryQueue(clock=clock)
    running: dict[str, int] = {}
    peak: dict[str, int] = {}
    overall = {"now": 0, "peak": 0}

    async def edit(ctx: StageContext) -> Mapping[str, Any]:
        assert ctx.key is not None
        running[ctx.key] = running.get(ctx.key, 0) + 1
        peak[ctx.key] = max(peak.get(ctx.key, 0), running[ctx.key])
        overall["now"] += 1
        overall["peak"] = max(overall["peak"], overall["now"])
        await ctx.clock.sleep(1.0)
        running[ctx.key] -= 1
        overall["now"] -= 1
        return {}

    p = Pipeline([Stage("edit", edit, concurrency=6, serialize=True)])
    runner = PipelineRunner(p, q)
    async with clock.autojumping():
        for i in range(12):
            await runner.submit(f"job{i}", f"i{i}", {}, key=f"repo{i % 3}")
        await runner.run(until_idle=True)
    assert peak == {"repo0": 1, "repo1": 1, "repo2": 1}
    assert overall["peak"] == 3  # different keys ran in parallel
    assert clock.now() == pytest.approx(4.0)


async def test_fairness_lets_small_jobs_pass_an_expensive_one() -> None:
    clock = FakeClock()
    q = MemoryQueue(clock=clock)
    done: dict[str, float] = {}

    async def work(ctx: StageContext) -> Mapping[str, Any]:
        await ctx.clock.sleep(1.0)
        done[ctx.item] = ctx.clock.now()
        return {}

    p = Pipeline([Stage("w", work, concurrency=2, cost=lambda _p: 1.0)])
    runner = PipelineRunner(p, q)
    async with clock.autojumping():
        for i in range(50):
            await runner.submit("big", f"big{i}", {})
        for i in range(4):
            await runner.submit(f"small{i}", f"small{i}", {})
        await runner.run(until_idle=True)
    smalls = [done[f"small{i}"] for i in range(4)]
    assert max(smalls) == pytest.approx(2.0)  # all small ones in the first two waves
    assert max(done.values()) == pytest.approx(27.0)


async def test_every_stage_shares_its_workers_between_groups() -> None:
    """A group's items keep their group downstream, where the group takes its turn.

    ``up`` is wide: group A's six items are through it at once and queue for
    the one ``down`` slot; B's item gets there later, while A's first runs.
    Its group, not its arrival, makes it the next one ``down`` serves.
    """
    clock = FakeClock()
    q = MemoryQueue(clock=clock)
    order: dict[str, list[str]] = {"up": [], "down": []}

    def work(seconds: float, late: Mapping[str, float] | None = None) -> Any:
        async def run(ctx: StageContext) -> Mapping[str, Any]:
            order[ctx.stage].append(ctx.item)
            await ctx.clock.sleep((late or {}).get(ctx.item, seconds))
            return {}

        return run

    up, down = work(0.1, late={"b": 0.5}), work(1.0)
    p = Pipeline([Stage("up", up, concurrency=8), Stage("down", down, after=("up",))])
    runner = PipelineRunner(p, q)
    async with clock.autojumping():
        for i in range(6):
            await runner.submit(f"a{i}", f"a{i}", {}, group="A")
        await runner.submit("b", "b", {}, group="B")
        await runner.run(until_idle=True)
    assert order["down"].index("b") == 1, order
    assert {r.stage for r in await q.records("b")} == {"up", "down"}


def test_pipeline_shape_errors_are_user_errors() -> None:
    async def f(ctx: StageContext) -> Mapping[str, Any]:
        return {}

    with pytest.raises(UserError, match="unknown stage 'nope'"):
        Pipeline([Stage("a", f, after=("nope",))])
    with pytest.raises(UserError, match="cycle"):
        Pipeline([Stage("a", f, after=("b",)), Stage("b", f, after=("a",))])
    with pytest.raises(UserError, match="defined twice"):
        Pipeline([Stage("a", f), Stage("a", f)])
