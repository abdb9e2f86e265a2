"""QueueBackend.stats, against every backend: the figures an autoscaler reads.

Each backend is built on a FakeClock, so the oldest message's age is exact;
Redis keeps its leases itself, so a lease running out is checked on the
backends whose leases follow the injected clock.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentrt._clock import FakeClock
from agentrt.queues import (
    MemoryQueue,
    Message,
    QueueBackend,
    QueueStats,
    SqliteQueue,
    StageState,
    StageStats,
)
from agentrt.queues._redis_streams import RedisQueue

_ns = itertools.count()


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def q(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[QueueBackend]:
    clock = FakeClock(start=1000.0)
    backend: QueueBackend
    if request.param == "memory":
        backend = MemoryQueue(clock=clock, max_deliveries=2)
    elif request.param == "sqlite":
        backend = SqliteQueue(tmp_path / "q.db", clock=clock, max_deliveries=2)
    else:
        url = request.getfixturevalue("redis_url")
        backend = RedisQueue(url, clock=clock, max_deliveries=2, namespace=f"st{next(_ns)}")
    try:
        yield backend
    finally:
        await backend.aclose()


def advance(q: QueueBackend, seconds: float) -> None:
    assert isinstance(q.clock, FakeClock)
    q.clock.advance(seconds)


def msg(item: str, stage: str, job: str = "j") -> Message:
    return Message(item, stage, job, {"n": item})


async def test_an_empty_store_has_zeros_for_the_stages_asked_and_none_else(
    q: QueueBackend,
) -> None:
    assert await q.stats() == QueueStats(())
    got = await q.stats(["b", "a", "b"])
    assert got.stages == (StageStats("b"), StageStats("a"))
    assert got.total == StageStats("", 0, 0, 0, None)


async def test_queued_in_flight_and_the_oldest_age_per_stage(q: QueueBackend) -> None:
    await q.put(msg("a1", "a"))
    advance(q, 5)
    await q.put(msg("a2", "a"))
    await q.put(msg("b1", "b"))
    advance(q, 3)
    d = await q.claim("a", "w", lease_s=60)
    assert d is not None and d.message.item == "a1"

    got = await q.stats(["a", "b", "c"])
    assert got.stage("a") == StageStats("a", queued=1, in_flight=1, dead=0, oldest_age_s=8.0)
    assert got.stage("b") == StageStats("b", queued=1, in_flight=0, dead=0, oldest_age_s=3.0)
    assert got.stage("c") == StageStats("c")
    assert got.total == StageStats("", 2, 1, 0, 8.0)
    # stages=None: the stages that hold something, by name
    assert [s.stage for s in (await q.stats()).stages] == ["a", "b"]
    assert got.stage("a").live == await q.depth("a")

    await q.complete(d, {"ok": True})
    advance(q, 2)
    after = await q.stats(["a"])
    assert after.stage("a") == StageStats("a", queued=1, in_flight=0, dead=0, oldest_age_s=5.0)


async def test_an_in_flight_message_is_the_oldest_when_it_came_first(q: QueueBackend) -> None:
    """The age counts leased messages too, not only those still waiting."""
    await q.put(msg("x1", "x", job="j1"))
    d = await q.claim("x", "w", lease_s=60)
    assert d is not None
    advance(q, 10)
    await q.put(msg("x2", "x", job="j2"))
    advance(q, 1)
    assert (await q.stats(["x"])).stage("x") == StageStats("x", 1, 1, 0, 11.0)


async def test_dead_letters_are_counted_per_stage(q: QueueBackend) -> None:
    await q.put(msg("d1", "a"))
    await q.put(msg("d2", "b"))
    for _ in range(2):  # max_deliveries=2: the second failure dead-letters it
        d = await q.claim("a", "w", lease_s=60)
        assert d is not None
        state = await q.fail(d, "boom")
    assert state is StageState.DEAD
    got = await q.stats()
    assert got.stage("a") == StageStats("a", 0, 0, 1, None)
    assert got.stage("b").queued == 1 and got.stage("b").dead == 0
    assert got.total.dead == 1


async def test_a_lease_that_ran_out_counts_as_queued(q: QueueBackend) -> None:
    if isinstance(q, RedisQueue):
        pytest.skip("Redis measures a lease's idle time itself, not by the injected clock")
    await q.put(msg("l1", "a"))
    assert await q.claim("a", "w", lease_s=10) is not None
    assert (await q.stats(["a"])).stage("a").in_flight == 1
    advance(q, 11)
    assert (await q.stats(["a"])).stage("a") == StageStats("a", 1, 0, 0, 11.0)


async def test_redis_counts_dead_letters_it_has_no_count_of(redis_url: str) -> None:
    """A store from before the per-stage counts (or an older worker's dead
    letter) is counted again from the dead stream, and kept from then on."""
    q = RedisQueue(redis_url, clock=FakeClock(), max_deliveries=1, namespace=f"old{next(_ns)}")
    try:
        # what an older version left: dead letters and no counts
        for stage in ("a", "a", "b"):
            await q.r.xadd(q.keys.dead, {"item": "i", "stage": stage, "job": "j", "payload": "{}"})
        got = await q.stats(["a", "b"])
        assert (got.stage("a").dead, got.stage("b").dead) == (2, 1)
        await q.put(msg("n1", "b"))
        d = await q.claim("b", "w", lease_s=60)
        assert d is not None and await q.fail(d, "boom") is StageState.DEAD
        # the dead letter was counted as it died, not found by a recount
        assert int(await q.r.hget(q.keys.dead_counts, "b")) == 2
        got = await q.stats(["a", "b"])
        assert (got.stage("a").dead, got.stage("b").dead) == (2, 2)
        await q.r.delete(q.keys.dead_counts)
        assert (await q.stats(["b"])).stage("b").dead == 2
    finally:
        await q.aclose()
