"""Scatter-gather and hierarchical reduce on a FakeClock."""

from __future__ import annotations

import pytest

from agentrt.clock import FakeClock
from agentrt.graph import (
    ReduceError,
    gather_map,
    hierarchical_reduce,
    map_reduce,
    plan_level,
    scatter,
)
from agentrt.llm import ChatRequest, FakeModel
from agentrt.tokens import LatencyModel


async def test_results_stream_back_in_completion_order_with_bounded_concurrency() -> None:
    clock = FakeClock()
    durations = [5.0, 1.0, 3.0, 1.0, 2.0]
    running = peak = 0

    async def call(i: int) -> float:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await clock.sleep(durations[i])
        running -= 1
        return clock.now()

    seen = []
    async with clock.autojumping(), scatter(call, range(5), limit=2) as results:
        async for o in results:
            seen.append((o.index, o.unwrap()))
    # two slots: 0 (5 s) and 1 (1 s); 2 starts at 1, 3 at 4, 4 at 5
    assert seen == [(1, 1.0), (2, 4.0), (0, 5.0), (3, 5.0), (4, 7.0)]
    assert peak == 2


async def test_fanout_of_model_calls_takes_one_call_not_the_sum() -> None:
    clock = FakeClock()
    model = FakeModel(clock=clock, latency=LatencyModel(0.5, 0.0, 50.0), max_concurrency=16)

    async def ask(i: int) -> int:
        r = await model.complete(ChatRequest.of(f"file {i}", max_tokens=100))
        return r.usage.output_tokens

    async with clock.autojumping():
        outs = await gather_map(ask, range(16), limit=16)
    assert [o.value for o in outs] == [100] * 16
    assert clock.now() == pytest.approx(0.5 + 99 / 50)  # one call's time, not 16
    assert model.max_in_flight == 16


async def test_partial_failures_are_collected_or_raised() -> None:
    async def f(i: int) -> int:
        if i % 3 == 0:
            raise ValueError(f"bad {i}")
        return i * 10

    outs = await gather_map(f, range(7), limit=3)
    assert [o.ok for o in outs] == [False, True, True, False, True, True, False]
    total, outs2 = await map_reduce(f, range(7), _sum, limit=3)
    assert total == 10 * (1 + 2 + 4 + 5)
    assert sum(not o.ok for o in outs2) == 3
    with pytest.raises(ValueError, match="bad 0"):
        await gather_map(f, range(7), limit=3, on_error="raise")


async def _sum(xs: list[int]) -> int:
    return sum(xs)


async def test_fail_fast_cancels_calls_in_flight() -> None:
    clock = FakeClock()
    finished = []

    async def f(i: int) -> int:
        await clock.sleep(1.0 if i == 0 else 10.0)
        if i == 0:
            raise RuntimeError("first one fails")
        finished.append(i)
        return i

    async with clock.autojumping():
        with pytest.raises(RuntimeError):
            await gather_map(f, range(4), limit=4, on_error="raise")
    assert finished == []
    assert clock.now() == 1.0


def test_plan_level_packs_in_order_under_the_budget() -> None:
    assert plan_level([3, 3, 3], 10) is None
    assert plan_level([4, 4, 4, 4, 12], 10) == [range(0, 2), range(2, 4), range(4, 5)]


async def test_hierarchical_reduce_never_reads_more_than_the_budget() -> None:
    calls: list[int] = []

    async def combine(parts: list[str]) -> str:
        calls.append(sum(len(p) for p in parts))
        return "s" * 10  # a summary of 10 "tokens"

    res = await hierarchical_reduce(["x" * 30] * 20, combine, size=len, budget=100)
    assert max(calls) <= 100
    # 20 items of 30 → 7 groups (3 items = 90 each, the last 2) → 7 summaries of 10 → 1 call
    assert (res.levels, res.calls) == (1, 8)
    assert res.value == "s" * 10


async def test_hierarchical_reduce_that_cannot_shrink_raises() -> None:
    async def keep(parts: list[str]) -> str:
        return "".join(parts)

    with pytest.raises(ReduceError, match="budget"):
        await hierarchical_reduce(["x" * 60] * 4, keep, size=len, budget=100, max_levels=3)
