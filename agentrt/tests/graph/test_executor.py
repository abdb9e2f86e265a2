"""The graph executor on a FakeClock: exact timings, no wall-clock."""

from __future__ import annotations

import asyncio

import pytest

from agentrt._clock import FakeClock
from agentrt.graph import (
    DeadlineExceeded,
    Graph,
    GraphError,
    NodeContext,
    NodeFinished,
    NodeStarted,
)
from agentrt.llm import ChatRequest, FakeModel
from agentrt.metrics import MetricsRecorder
from agentrt.tokens import LatencyModel


def sleeper(clock: FakeClock, seconds: float, value: object = None):  # type: ignore[no-untyped-def]
    async def run(ctx: NodeContext) -> object:
        await clock.sleep(seconds)
        return value if value is not None else ctx.name

    return run


async def test_slow_branch_never_delays_an_unrelated_fast_branch() -> None:
    clock = FakeClock()
    g = Graph()
    # slow branch: one 100 s step; fast branch: three 1 s steps in a chain
    g.add("slow", sleeper(clock, 100.0))
    g.add("f1", sleeper(clock, 1.0))
    g.add("f2", sleeper(clock, 1.0), inputs=["f1"])
    g.add("f3", sleeper(clock, 1.0), inputs=["f2"])
    g.add("join", sleeper(clock, 1.0), inputs=["slow", "f3"])
    async with clock.autojumping():
        res = await g.run(clock=clock)
    r = res.report
    # in supersteps f2 would wait for "slow"; here each fast step starts when its input is ready
    assert r.timing("f2").started_at == 1.0
    assert r.timing("f3").started_at == 2.0
    assert r.timing("f3").ended_at == 3.0
    assert r.timing("join").started_at == 100.0
    assert r.wall_s == 101.0
    assert r.critical_path == ("slow", "join")
    assert r.critical_path_s == 101.0
    assert r.sum_s == 104.0


async def test_outputs_flow_to_dependents_and_tools_are_recorded() -> None:
    clock = FakeClock()
    rec = MetricsRecorder(clock)

    async def weather() -> str:
        await clock.sleep(2.0)
        return "sunny"

    async def calendar() -> str:
        await clock.sleep(3.0)
        return "free"

    async def plan(weather: str, calendar: str) -> str:
        await clock.sleep(1.0)
        return f"{weather}+{calendar}"

    g = Graph()
    g.tool("weather", weather)
    g.tool("calendar", calendar)
    g.tool("plan", plan, inputs=["weather", "calendar"])
    async with clock.autojumping():
        res = await g.run(clock=clock, recorder=rec)
    assert res["plan"] == "sunny+free"
    assert res.report.wall_s == 4.0
    tools = {c.name: c for c in rec.records}
    assert tools["plan"].stage == "plan" and tools["plan"].started_at == 3.0
    for t in res.report.timings:  # node timings line up with the metrics records
        assert tools[t.node].started_at == t.started_at
        assert tools[t.node].wall_s == t.duration_s


async def test_model_node_timing_matches_its_call_record() -> None:
    clock = FakeClock()
    rec = MetricsRecorder(clock)
    model = FakeModel(clock=clock, latency=LatencyModel(0.5, 0.0, 50.0))
    g = Graph()
    g.add("prep", sleeper(clock, 2.0, "hello"))
    g.model("ask", model, lambda i: ChatRequest.of(i["prep"], max_tokens=50), inputs=["prep"])
    async with clock.autojumping():
        res = await g.run(clock=clock, recorder=rec)
    (call,) = rec.records
    t = res.report.timing("ask")
    assert call.stage == "ask" and not call.streamed
    assert call.started_at == t.started_at == 2.0
    assert call.wall_s == pytest.approx(t.duration_s)
    assert res["ask"].usage.output_tokens == 50


async def test_fail_fast_cancels_in_flight_calls_and_reraises() -> None:
    clock = FakeClock()
    rec = MetricsRecorder(clock)
    model = FakeModel(clock=clock, latency=LatencyModel(0.5, 0.0, 10.0))

    async def boom(ctx: NodeContext) -> None:
        await clock.sleep(1.0)
        raise ValueError("tool broke")

    g = Graph()
    g.model("long", model, lambda _: ChatRequest.of("x", max_tokens=500))
    g.add("boom", boom)
    g.add("after", sleeper(clock, 1.0), inputs=["long"])
    async with clock.autojumping():
        with pytest.raises(ValueError, match="tool broke") as info:
            await g.run(clock=clock, recorder=rec)
    assert "in graph node 'boom'" in info.value.__notes__
    (call,) = rec.records
    assert call.outcome == "cancelled" and call.wall_s == 1.0
    assert model.in_flight == 0


async def test_continue_policy_skips_dependents_and_finishes_the_rest() -> None:
    clock = FakeClock()

    async def bad(ctx: NodeContext) -> None:
        raise RuntimeError("nope")

    g = Graph()
    g.add("bad", bad, on_error="continue")
    g.add("dep", sleeper(clock, 1.0), inputs=["bad"])
    g.add("other", sleeper(clock, 5.0))
    async with clock.autojumping():
        res = await g.run(clock=clock)
    assert isinstance(res.errors["bad"], RuntimeError)
    assert res.outputs == {"other": "other"}
    assert res.report.timing("dep").status == "skipped"
    assert res.report.timing("other").status == "done"
    assert res.report.critical_path == ("other",)


async def test_node_deadline_on_the_injected_clock() -> None:
    clock = FakeClock()
    g = Graph()
    g.add("stuck", sleeper(clock, 1000.0), deadline_s=30.0, on_error="continue")
    g.add("fine", sleeper(clock, 10.0), deadline_s=30.0)
    async with clock.autojumping():
        res = await g.run(clock=clock)
    assert isinstance(res.errors["stuck"], DeadlineExceeded)
    assert res.report.timing("stuck").ended_at == 30.0
    assert res["fine"] == "fine"


async def test_run_deadline_cancels_everything() -> None:
    clock = FakeClock()
    g = Graph()
    g.add("a", sleeper(clock, 50.0))
    g.add("b", sleeper(clock, 50.0), inputs=["a"])
    async with clock.autojumping():
        with pytest.raises(DeadlineExceeded):
            await g.run(clock=clock, deadline_s=60.0)
    assert clock.now() == 60.0


async def test_event_stream_carries_tokens_of_user_facing_nodes_only() -> None:
    clock = FakeClock()
    rec = MetricsRecorder(clock)
    model = FakeModel(clock=clock, latency=LatencyModel(0.5, 0.0, 20.0))
    g = Graph()
    g.model("internal", model, lambda _: ChatRequest.of("a", max_tokens=10))
    g.model(
        "answer",
        model,
        lambda i: ChatRequest.of("b", max_tokens=10),
        inputs=["internal"],
        stream=True,
    )
    events = []
    async with clock.autojumping(), g.running(clock=clock, recorder=rec) as run:
        async for ev in run.events():
            events.append(ev)
    assert run.result is not None
    tokens = [e for e in events if e.__class__.__name__ == "NodeToken"]
    assert tokens and {e.node for e in tokens} == {"answer"}
    assert "".join(e.text for e in tokens) == run.result["answer"].text
    # first token at the answer node's start + TTFT
    assert tokens[0].at == pytest.approx(run.result.report.timing("answer").started_at + 0.5)
    assert isinstance(events[0], NodeStarted)
    assert isinstance(events[-1], NodeFinished) and events[-1].node == "answer"
    by_stage = {c.stage: c for c in rec.records}
    assert by_stage["answer"].streamed and by_stage["answer"].ttft_s == pytest.approx(0.5)
    assert not by_stage["internal"].streamed and by_stage["internal"].output_tps


async def test_leaving_the_event_stream_early_cancels_the_run() -> None:
    clock = FakeClock()
    g = Graph()
    g.add("a", sleeper(clock, 1.0))
    g.add("b", sleeper(clock, 100.0), inputs=["a"])
    async with clock.autojumping(), g.running(clock=clock) as run:
        async for ev in run.events():
            if isinstance(ev, NodeStarted) and ev.node == "b":
                break
    assert run.result is None
    await asyncio.sleep(0)
    assert clock.now() == 1.0


async def test_values_are_read_as_the_type_the_reader_names_and_checked() -> None:
    clock = FakeClock()
    seen: list[int] = []

    async def count(ctx: NodeContext) -> int:
        return 41

    async def plus_one(ctx: NodeContext) -> int:
        seen.append(ctx.input("count", int) + 1)
        return seen[-1]

    async def misread(ctx: NodeContext) -> str:
        return ctx.input("count", str)

    g = Graph()
    g.add("count", count)
    g.add("plus_one", plus_one, inputs=["count"])
    async with clock.autojumping():
        res = await g.run(clock=clock)
    assert seen == [42] and res.output("plus_one", int) == 42
    with pytest.raises(GraphError, match="node 'plus_one' gave int, not the str read here"):
        res.output("plus_one", str)
    bad = Graph()
    bad.add("count", count)
    bad.add("misread", misread, inputs=["count"])
    with pytest.raises(GraphError, match="not the str read here"):
        async with clock.autojumping():
            await bad.run(clock=clock)
