"""The queue contract, run against every backend: memory, SQLite, Redis Streams."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentrt._clock import FakeClock
from agentrt.queues import (
    Emit,
    MemoryQueue,
    Message,
    QueueBackend,
    SqliteQueue,
    StageFailure,
    StageState,
)
from agentrt.queues._redis_streams import RedisQueue

_ns = itertools.count()


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def q(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[QueueBackend]:
    backend: QueueBackend
    if request.param == "memory":
        backend = MemoryQueue(clock=FakeClock(), max_deliveries=3)
    elif request.param == "sqlite":
        backend = SqliteQueue(tmp_path / "q.db", clock=FakeClock(), max_deliveries=3)
    else:
        url = request.getfixturevalue("redis_url")
        backend = RedisQueue(url, max_deliveries=3, namespace=f"t{next(_ns)}")
    try:
        yield backend
    finally:
        await backend.aclose()


def msg(item: str, stage: str = "a", job: str = "j", **kw: object) -> Message:
    return Message(item, stage, job, {"n": item}, **kw)  # type: ignore[arg-type]


def lease(q: QueueBackend) -> float:
    # Redis measures idle time itself; a lease of 0 makes a held entry
    # reclaimable at once, which is what the other backends see after advance()
    return 0.0 if isinstance(q, RedisQueue) else 10.0


def expire(q: QueueBackend) -> None:
    if isinstance(q.clock, FakeClock):
        q.clock.advance(11.0)


async def test_claim_complete_records_effect_once_and_emits(q: QueueBackend) -> None:
    await q.put(msg("i1"))
    assert await q.depth("a") == 1
    d = await q.claim("a", "w1", lease_s=10)
    assert d is not None and d.attempt == 1 and d.message.payload == {"n": "i1"}
    assert await q.claim("a", "w2", lease_s=10) is None  # leased, not visible
    assert await q.complete(d, {"r": 1}, [Emit(msg("i1", "b"))]) is True
    assert await q.depth("a") == 0
    assert await q.depth("b") == 1
    assert await q.results("i1", ["a", "b"]) == {"a": {"r": 1}}
    # a second completion (a redelivery that finished late) applies nothing
    assert await q.complete(d, {"r": 2}, [Emit(msg("i1", "b"))]) is False
    assert await q.depth("b") == 1
    assert await q.results("i1", ["a"]) == {"a": {"r": 1}}
    recs = {(r.item, r.stage): r for r in await q.records()}
    assert recs[("i1", "a")].state is StageState.DONE
    assert recs[("i1", "a")].attempts == 1
    assert recs[("i1", "b")].state is StageState.QUEUED


async def test_join_emits_once_when_all_inputs_are_done(q: QueueBackend) -> None:
    await q.put(msg("i", "x"))
    await q.put(msg("i", "y"))
    join = Emit(msg("i", "z"), requires=("x", "y"))
    dx = await q.claim("x", "w", lease_s=10)
    dy = await q.claim("y", "w", lease_s=10)
    assert dx and dy
    await q.complete(dx, {}, [join])
    assert await q.depth("z") == 0  # y not done yet
    await q.complete(dy, {}, [join])
    assert await q.depth("z") == 1
    assert await q.complete(dy, {}, [join]) is False
    assert await q.depth("z") == 1


async def test_expired_lease_is_redelivered_and_counts_attempts(q: QueueBackend) -> None:
    await q.put(msg("i"))
    d1 = await q.claim("a", "dead-worker", lease_s=lease(q))
    assert d1 is not None
    expire(q)
    d2 = await q.claim("a", "w2", lease_s=lease(q))
    assert d2 is not None and d2.message.item == "i" and d2.attempt == 2
    # the first holder's late completion still counts once; the second is a no-op
    assert await q.complete(d1, {"by": 1}) is True
    assert await q.complete(d2, {"by": 2}) is False
    assert await q.results("i", ["a"]) == {"a": {"by": 1}}
    assert await q.pending() == 0


def told(q: QueueBackend) -> list[StageFailure]:
    """The failures ``q`` reports to its hooks from now on."""
    seen: list[StageFailure] = []

    async def hook(failure: StageFailure) -> None:
        seen.append(failure)

    q.failures.add(hook)
    return seen


async def test_failures_retry_then_dead_letter(q: QueueBackend) -> None:
    await q.put(msg("i"))
    heard = told(q)
    states = []
    for attempt in (1, 2, 3):
        d = await q.claim("a", "w", lease_s=10)
        assert d is not None and d.attempt == attempt
        states.append(await q.fail(d, f"boom {attempt}"))
        # a second fail of the same delivery (a retried call) records and tells nothing
        assert await q.fail(d, "again") in (StageState.FAILED, StageState.DEAD)
    assert states == [StageState.FAILED, StageState.FAILED, StageState.DEAD]
    assert [(f.attempt, f.error, f.state, f.dead) for f in heard] == [
        (1, "boom 1", StageState.FAILED, False),
        (2, "boom 2", StageState.FAILED, False),
        (3, "boom 3", StageState.DEAD, True),
    ]
    assert all(f.message.item == "i" and f.message.job == "j" for f in heard)
    assert await q.claim("a", "w", lease_s=10) is None
    assert await q.pending() == 0
    (rec,) = await q.records()
    assert rec.state is StageState.DEAD and rec.attempts == 3 and rec.error == "boom 3"


async def test_worker_dying_repeatedly_dead_letters_after_max_deliveries(q: QueueBackend) -> None:
    await q.put(msg("i"))
    heard = told(q)
    for _ in range(3):
        assert await q.claim("a", "w", lease_s=lease(q)) is not None
        expire(q)
    assert heard == []  # a lease running out is no failure the store records
    assert await q.claim("a", "w", lease_s=lease(q)) is None
    (rec,) = await q.records()
    assert rec.state is StageState.DEAD
    # the claim that dead-lettered it tells the hooks, once: no stage function ran
    ((failure),) = heard
    assert failure.dead and failure.attempt == 3 and failure.message.item == "i"
    assert failure.error == rec.error


async def test_a_hook_that_raises_stops_neither_the_store_nor_the_next_hook(
    q: QueueBackend,
) -> None:
    async def broken(failure: StageFailure) -> None:
        raise RuntimeError("observer down")

    q.failures.add(broken)
    heard = told(q)
    await q.put(msg("i"))
    d = await q.claim("a", "w", lease_s=10)
    assert d is not None
    assert await q.fail(d, "boom") is StageState.FAILED
    assert [f.error for f in heard] == ["boom"]
    assert await q.claim("a", "w", lease_s=10) is not None


async def test_serialized_stage_skips_a_held_key(q: QueueBackend) -> None:
    await q.put(msg("i1", key="repo"))
    await q.put(msg("i2", key="repo", job="k"))
    await q.put(msg("i3", key="other", job="m"))
    d1 = await q.claim("a", "w", lease_s=10, serialize=True)
    d2 = await q.claim("a", "w", lease_s=10, serialize=True)
    assert d1 and d2
    assert {d1.message.key, d2.message.key} == {"repo", "other"}
    assert await q.claim("a", "w", lease_s=10, serialize=True) is None
    held = d1 if d1.message.key == "repo" else d2
    await q.complete(held, {})
    d3 = await q.claim("a", "w", lease_s=10, serialize=True)
    assert d3 is not None and d3.message.key == "repo"


async def test_small_jobs_pass_a_big_one(q: QueueBackend) -> None:
    for i in range(5):
        await q.put(msg(f"big{i}", job="big", cost_s=50.0))
    await q.put(msg("small", job="small", cost_s=1.0))
    d = await q.claim("a", "w", lease_s=10)
    assert d is not None and d.message.job == "small"


async def _serve_next(q: QueueBackend, stage: str = "a") -> Message:
    """Claim the stage's next message and complete it: one worker's turn."""
    d = await q.claim(stage, "w", lease_s=30)
    assert d is not None
    assert await q.complete(d, {})
    return d.message


async def test_groups_take_turns_however_many_jobs_one_queued(q: QueueBackend) -> None:
    """Issue 21: one group (a tenant) queued six jobs before another's two.

    First in, first out served all six first; groups taking turns serve the
    second group's jobs second and fourth.
    """
    for i in range(6):
        await q.put(msg(f"a{i}", job=f"a{i}", group="A"))
    for i in range(2):
        await q.put(msg(f"b{i}", job=f"b{i}", group="B"))
    order = [(await _serve_next(q)).group for _ in range(8)]
    assert order == ["A", "B", "A", "B", "A", "A", "A", "A"]


async def test_a_group_running_fewer_goes_first(q: QueueBackend) -> None:
    """Served last, but running nothing while the other group runs one: served again."""
    for i in range(3):
        await q.put(msg(f"a{i}", job=f"a{i}", group="A"))
    for i in range(2):
        await q.put(msg(f"b{i}", job=f"b{i}", group="B"))
    held = await q.claim("a", "w1", lease_s=30)  # A's first job runs on
    assert held is not None and held.message.group == "A"
    assert [(await _serve_next(q)).item for _ in range(2)] == ["b0", "b1"]
    assert (await _serve_next(q)).group == "A"


async def test_depth_of_a_group_counts_its_queued_and_running(q: QueueBackend) -> None:
    for i in range(3):
        await q.put(msg(f"a{i}", job=f"a{i}", group="A"))
    await q.put(msg("b0", job="b0", group="B"))
    d = await q.claim("a", "w", lease_s=30)
    assert d is not None and d.message.group == "A"
    depths = [await q.depth("a", g) for g in ("A", "B", "C", "")]
    assert depths == [3, 1, 0, 0] and await q.depth("a") == 4
    assert await q.complete(d, {})
    assert await q.depth("a", "A") == 2


async def test_emitted_and_retried_messages_keep_their_group(q: QueueBackend) -> None:
    await q.put(msg("i", group="A"))
    d = await q.claim("a", "w", lease_s=30)
    assert d is not None
    assert await q.complete(d, {}, [Emit(msg("i", "b", group="A"))])
    assert await q.depth("b", "A") == 1
    d2 = await q.claim("b", "w", lease_s=30)
    assert d2 is not None and d2.message.group == "A"
    assert await q.fail(d2, "boom") is StageState.FAILED
    d3 = await q.claim("b", "w", lease_s=30)
    assert d3 is not None and d3.message.group == "A" and d3.attempt == 2


async def test_a_reclaim_racing_the_holders_completion_leaves_the_record_done(
    redis_url: str,
) -> None:
    """Redis: a reclaim and the first holder's completion interleave mid-claim.

    The reclaim takes the entry (XAUTOCLAIM) and, before it marks the record
    running, the first holder completes it. Seen under load in the staged
    SIGKILL test, where the record then said running forever.
    """
    q = RedisQueue(redis_url, max_deliveries=3, namespace=f"t{next(_ns)}")
    try:
        await q.put(msg("i"))
        d1 = await q.claim("a", "w1", lease_s=0.0)
        assert d1 is not None
        xautoclaim = q.r.xautoclaim
        raced: list[bool] = []

        async def completed_meanwhile(*args: object, **kwargs: object) -> object:
            got = await xautoclaim(*args, **kwargs)
            if got[1] and not raced:  # w2 holds the entry; w1 completes before w2 starts it
                raced.append(await q.complete(d1, {"by": 1}))
            return got

        q.r.xautoclaim = completed_meanwhile
        assert await q.claim("a", "w2", lease_s=0.0) is None  # nothing left to run
        assert raced == [True]
        (rec,) = await q.records()
        assert rec.state is StageState.DONE
        assert await q.results("i", ["a"]) == {"a": {"by": 1}}
        assert await q.pending() == 0
    finally:
        await q.aclose()
