import asyncio

import pytest

from agentrt._clock import FakeClock, ScaledClock


async def test_fake_clock_wakes_sleepers_in_deadline_order():
    clock = FakeClock()
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, d: float) -> None:
        await clock.sleep(d)
        woke.append((name, clock.now()))

    tasks = [asyncio.create_task(sleeper("b", 2.0)), asyncio.create_task(sleeper("a", 1.0))]
    await asyncio.sleep(0)
    clock.advance(1.5)
    await asyncio.sleep(0)
    # a task observes the time at which it runs: after the whole advance
    assert woke == [("a", 1.5)]
    clock.advance(1.0)
    await asyncio.gather(*tasks)
    assert woke == [("a", 1.5), ("b", 2.5)]
    assert clock.now() == 2.5


async def test_autojump_runs_long_scenarios_instantly_with_exact_times():
    clock = FakeClock()

    async def work(d: float) -> float:
        await clock.sleep(d)
        return clock.now()

    async with clock.autojumping():
        ends = await asyncio.gather(work(600.0), work(30.0), work(0.0))
    assert ends == [600.0, 30.0, 0.0]


async def test_cancelled_sleeper_does_not_block_time():
    clock = FakeClock()
    t = asyncio.create_task(clock.sleep(5))
    await asyncio.sleep(0)
    t.cancel()
    with pytest.raises(asyncio.CancelledError):
        await t
    assert clock.next_deadline() is None


def test_time_cannot_go_backwards_and_scale_must_be_positive():
    with pytest.raises(ValueError):
        FakeClock().advance(-1)
    with pytest.raises(ValueError):
        ScaledClock(0)
