"""Scatter-gather on a FakeClock."""

from __future__ import annotations

import pytest

from agentrt._clock import FakeClock
from agentrt.graph import gather_map, scatter
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
    with pytest.raises(ValueError, match="bad 0"):
        await gather_map(f, range(7), limit=3, on_error="raise")


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
