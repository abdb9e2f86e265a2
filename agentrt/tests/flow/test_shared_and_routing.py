"""Redis-shared limits (own redis-server), the limiter driver, and routing."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from agentrt._clock import FakeClock
from agentrt._errors import ConfigError
from agentrt.flow import (
    AdaptiveLimit,
    BreakerModel,
    CircuitBreaker,
    ConcurrencyLimiter,
    LocalRetryBudget,
    Reservation,
    RetryBudget,
    RetryBudgetRules,
    RetryingModel,
    RoutedModel,
    RoutingTable,
    StaticLimit,
)
from agentrt.llm import ChatRequest, FakeModel, provider_error
from agentrt.metrics import stage
from agentrt.tokens import LatencyModel


async def test_redis_buckets_are_atomic_across_clients(redis_url):
    from redis.asyncio import Redis

    from agentrt.flow._redis_store import RedisRateGate

    clock = FakeClock(1000.0)
    key = f"test:{uuid.uuid4().hex}"
    clients = [Redis.from_url(redis_url) for _ in range(4)]
    gates = [RedisRateGate(c, key, rpm=None, tpm=6000, headroom=0.0, clock=clock) for c in clients]
    try:
        results = await asyncio.gather(*(g.reserve(100) for g in gates for _ in range(25)))
        granted = [r for r in results if isinstance(r, Reservation)]
        assert len(granted) == 60  # exactly a minute's tokens, never more
        waits = [r for r in results if not isinstance(r, Reservation)]
        assert all(w == pytest.approx(1.0) for w in waits)  # 100 tokens at 100/s
        await gates[0].settle(granted[0], 0)  # refunded: one more fits now
        assert isinstance(await gates[1].reserve(100), Reservation)
        await gates[2].block_for(30.0)
        clock.advance(10.0)
        assert await gates[3].reserve(1) == pytest.approx(20.0)
    finally:
        for c in clients:
            await c.aclose()


async def test_redis_retry_budget_is_shared(redis_url):
    from redis.asyncio import Redis

    from agentrt.flow._redis_store import RedisRetryBudget

    key = f"test:{uuid.uuid4().hex}"
    a, b = Redis.from_url(redis_url), Redis.from_url(redis_url)
    try:
        ba = RedisRetryBudget(
            a, key, RetryBudgetRules(share=0.2, min_in_flight=3, ratio=1.0, burst=100)
        )
        bb = RedisRetryBudget(
            b, key, RetryBudgetRules(share=0.2, min_in_flight=3, ratio=1.0, burst=100)
        )
        for _ in range(20):
            await ba.call_started()
            await bb.call_started()
        got = [await ba.try_retry() for _ in range(5)] + [await bb.try_retry() for _ in range(5)]
        assert sum(got) == 8  # 20% of 40 calls in flight, over both processes
        counters = await ba.counters()
        assert counters["active"] == 40 and counters["retrying"] == 8
    finally:
        await a.aclose()
        await b.aclose()


async def test_redis_retry_budget_decides_as_the_local_one(redis_url):
    """The Lua script and RetryBudget agree on every verdict of a random run."""
    import random

    from redis.asyncio import Redis

    from agentrt.flow._redis_store import RedisRetryBudget
    from agentrt.flow._retry import RetryBudget

    key = f"test:{uuid.uuid4().hex}"
    r = Redis.from_url(redis_url)
    try:
        shared = RedisRetryBudget(r, key, RetryBudgetRules(min_in_flight=1))
        local = RetryBudget(RetryBudgetRules(min_in_flight=1))
        rng = random.Random(0)
        verdicts = []
        for step in range(400):
            op = rng.choice(["start", "finish", "ok", "fail", "fail", "try", "rfinish"])
            if op == "start":
                local.call_started()
                await shared.call_started()
            elif op == "finish" and local.active:
                local.call_finished()
                await shared.call_finished()
            elif op in ("ok", "fail"):
                local.record(ok=op == "ok")
                await shared.record(ok=op == "ok")
            elif op == "try":
                mine, theirs = local.ask_retry(), await shared.ask_retry()
                assert mine == theirs, f"step {step}"
                verdicts.append(mine)
            elif op == "rfinish" and local.retrying:
                local.retry_finished()
                await shared.retry_finished()
        assert {"granted", "busy", "refused"} <= set(verdicts)
    finally:
        await r.aclose()


async def test_limiter_never_exceeds_its_limit_and_adapts():
    clock = FakeClock()
    # the endpoint serves 4 at full speed; beyond that each call slows down
    inner = FakeModel(clock=clock, latency=LatencyModel(1.0, 0.0, 1e9))
    active = 0
    peak = 0

    async def call(limiter):
        nonlocal active, peak
        async with limiter.permit() as p:
            active += 1
            peak = max(peak, active)
            await clock.sleep(1.0 * max(1.0, active / 4))
            active -= 1
            p.succeeded()

    static = ConcurrencyLimiter(StaticLimit(3), clock=clock)
    async with clock.autojumping(), asyncio.TaskGroup() as tg:
        for _ in range(30):
            tg.create_task(call(static))
    assert peak == 3 and static.in_use == 0

    adaptive = ConcurrencyLimiter(AdaptiveLimit(), clock=clock)
    async with clock.autojumping(), asyncio.TaskGroup() as tg:
        for _ in range(600):
            tg.create_task(call(adaptive))
    assert adaptive.limit in (4, 5) and adaptive.in_use == 0
    del inner


async def test_routing_by_stage_with_fallback_when_the_breaker_opens():
    clock = FakeClock()
    lat = LatencyModel(0.1, 0.0, 1e9)
    budget = LocalRetryBudget(RetryBudget(RetryBudgetRules(ratio=1.0, burst=100)))
    large_inner = FakeModel(
        model="large", clock=clock, latency=lat, failures=[provider_error(503)] * 100
    )
    # min_span_s=0: four failures open it however close the jittered retries
    # fell (with the default 1 s span, about 1 run in 30 needed a fifth)
    breaker = CircuitBreaker(window=4, min_calls=4, failure_ratio=0.75, open_s=60, min_span_s=0.0)
    large = RetryingModel(BreakerModel(large_inner, breaker), clock=clock, budget=budget)
    small = RetryingModel(FakeModel(model="small", clock=clock, latency=lat), clock=clock)
    table = RoutingTable.from_mapping(
        {"default": ["small"], "plan": ["large", "small"]}, known=["large", "small"]
    )
    router = RoutedModel({"large": large, "small": small}, table)
    async with clock.autojumping():
        with stage("map"):
            assert (await router.complete(ChatRequest.of("x"))).model == "small"
        assert (await router.complete(ChatRequest.of("x", stage="plan"))).model == "small"
        sent = len(large_inner.requests)
        assert sent == 4  # the breaker opened after its window of failures
        assert (await router.complete(ChatRequest.of("x", stage="plan"))).model == "small"
        assert len(large_inner.requests) == sent  # open: not even tried
    assert router.fallbacks_taken == 2
    with pytest.raises(ConfigError, match="unknown endpoint 'huge'"):
        RoutingTable.from_mapping({"default": ["huge"]}, known=["small"])
