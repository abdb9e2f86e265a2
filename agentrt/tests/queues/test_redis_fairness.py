"""Fairness on Redis Streams: the same policy as SQLite and memory, across processes.

Like ``tests/pipeline/test_pipeline.py::test_fairness_lets_small_jobs_pass_an_expensive_one``
but on a private redis-server: small jobs submitted after a big job's
backlog are served before it, a group's job submitted after another
group's backlog is served next, and claimers racing on separate
connections never get the same entry.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping
from typing import Any

from agentrt.pipeline import Pipeline, PipelineRunner, Stage, StageContext
from agentrt.queues import Fifo, Message
from agentrt.queues._redis_streams import RedisQueue

_ns = itertools.count()


async def test_small_jobs_pass_an_expensive_one_on_redis(redis_url: str) -> None:
    q = RedisQueue(redis_url, namespace=f"fair{next(_ns)}")
    order: list[str] = []

    async def work(ctx: StageContext) -> Mapping[str, Any]:
        order.append(ctx.job)
        await asyncio.sleep(0)
        return {}

    p = Pipeline([Stage("w", work, concurrency=2, cost=lambda _p: 1.0)])
    runner = PipelineRunner(p, q)
    try:
        for i in range(30):
            await runner.submit("big", f"big{i}", {})
        for i in range(4):
            await runner.submit(f"small{i}", f"small{i}", {})
        await runner.run(until_idle=True)
    finally:
        await q.aclose()
    assert len(order) == 34 and runner.duplicates == 0
    # every small job is among the first claims: one per slot per wave
    assert {j for j in order[:6] if j.startswith("small")} == {f"small{i}" for i in range(4)}


async def test_a_late_group_is_served_next_on_redis(redis_url: str) -> None:
    """Issue 21 on Redis: one group's 30 queued jobs do not hold back another group's one."""
    q = RedisQueue(redis_url, namespace=f"fair{next(_ns)}")
    order: list[str] = []

    async def work(ctx: StageContext) -> Mapping[str, Any]:
        order.append(ctx.job)
        await asyncio.sleep(0)
        return {}

    runner = PipelineRunner(Pipeline([Stage("w", work, concurrency=2)]), q)
    try:
        for i in range(30):
            await runner.submit(f"a{i}", f"a{i}", {}, group="A")
        await runner.submit("b", "b", {}, group="B")
        await runner.run(until_idle=True)
    finally:
        await q.aclose()
    assert len(order) == 31 and runner.duplicates == 0
    assert order.index("b") <= 1, order  # the first claim at most goes to A


async def test_fifo_policy_serves_the_backlog_first_on_redis(redis_url: str) -> None:
    """The control: with plain FIFO the same workload makes the small jobs wait."""
    q = RedisQueue(redis_url, namespace=f"fair{next(_ns)}", policy=Fifo())
    try:
        for i in range(5):
            await q.put(Message(f"big{i}", "a", "big", cost_s=50.0))
        await q.put(Message("small", "a", "small", cost_s=1.0))
        d = await q.claim("a", "w", lease_s=10)
        assert d is not None and d.message.job == "big"
    finally:
        await q.aclose()


async def test_racing_claimers_on_separate_connections_never_share_an_entry(
    redis_url: str,
) -> None:
    ns = f"fair{next(_ns)}"
    qs = [RedisQueue(redis_url, namespace=ns) for _ in range(4)]
    try:
        for i in range(40):
            await qs[0].put(Message(f"i{i}", "a", f"job{i % 5}", cost_s=float(i % 3)))

        async def drain(q: RedisQueue, name: str) -> list[str]:
            got = []
            while (d := await q.claim("a", name, lease_s=30)) is not None:
                got.append(d.message.item)
                assert await q.complete(d, {"by": name})
            return got

        lists = await asyncio.gather(*(drain(q, f"w{n}") for n, q in enumerate(qs)))
        seen = [i for got in lists for i in got]
        assert sorted(seen) == sorted(f"i{i}" for i in range(40))
        assert await qs[0].pending() == 0
    finally:
        for q in qs:
            await q.aclose()
