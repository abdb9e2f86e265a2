"""Deadlines and Retry-After, driven through the flow layers on a FakeClock."""

from __future__ import annotations

import asyncio
import random

import pytest

from agentrt._clock import FakeClock
from agentrt._errors import ProviderError
from agentrt.flow import (
    DeadlineExceeded,
    GiveUp,
    LocalRateGate,
    LocalRetryBudget,
    RateLimitedModel,
    RetryAfter,
    RetryBudget,
    RetryBudgetRules,
    RetryingModel,
    RetryPolicy,
    fail_after,
    next_action,
)
from agentrt.llm import ChatRequest, FakeModel, provider_error
from agentrt.metrics import MetricsRecorder
from agentrt.tokens import LatencyModel


class SendLog(FakeModel):
    """A FakeModel that notes the clock time each attempt is sent."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.sent_at: list[float] = []

    async def _complete(self, request, model):
        self.sent_at.append(self.clock.now())
        return await super()._complete(request, model)


def _model(clock, failures, *, ttft=0.5, **kw):
    inner = SendLog(clock=clock, latency=LatencyModel(ttft, 0.0, 1000.0), failures=failures)
    budget = LocalRetryBudget(RetryBudget(RetryBudgetRules(ratio=1.0, burst=100)))
    return inner, RetryingModel(inner, clock=clock, budget=budget, rng=random.Random(1), **kw)


async def test_no_attempt_starts_after_the_deadline():
    clock = FakeClock()
    fails = [provider_error(503)] * 50
    inner, model = _model(clock, fails, policy=RetryPolicy(max_attempts=50, base_s=1.0, cap_s=2.0))
    async with clock.autojumping():
        with pytest.raises(DeadlineExceeded):
            async with fail_after(10.0, clock):
                await model.complete(ChatRequest.of("hi"))
    assert len(inner.sent_at) >= 3  # it did retry while there was time
    assert all(t < 10.0 for t in inner.sent_at)
    assert clock.now() <= 10.0 + 1e-9  # and nothing kept running past the deadline


async def test_a_call_in_flight_is_cut_at_the_deadline():
    clock = FakeClock()
    inner, model = _model(clock, [], ttft=30.0)
    async with clock.autojumping():
        with pytest.raises(DeadlineExceeded):
            async with fail_after(5.0, clock):
                await model.complete(ChatRequest.of("hi"))
    assert clock.now() == pytest.approx(5.0)
    assert inner.in_flight == 0


async def test_model_deadline_option_and_backoff_never_sleeps_past_it():
    clock = FakeClock()
    # Retry-After of 60 s cannot fit a 20 s deadline: give up at once, do not sleep
    inner, model = _model(clock, [provider_error(429, retry_after=60.0)], deadline_s=20.0)
    async with clock.autojumping():
        with pytest.raises(DeadlineExceeded, match="no retry"):
            await model.complete(ChatRequest.of("hi"))
    assert len(inner.sent_at) == 1
    assert clock.now() == pytest.approx(0.5)


async def test_no_attempt_goes_out_before_retry_after_allows():
    clock = FakeClock()
    fails = [provider_error(429, retry_after=7.0), provider_error(503, retry_after=3.0)]
    inner, model = _model(clock, fails, policy=RetryPolicy(base_s=0.01, cap_s=0.01))
    async with clock.autojumping():
        result = await model.complete(ChatRequest.of("hi"))
    assert result.text
    first, second, third = inner.sent_at
    assert second - (first + 0.5) >= 7.0  # failed at TTFT, then waited Retry-After
    assert third - (second + 0.5) >= 3.0


async def test_retry_after_blocks_other_calls_on_the_same_endpoint():
    clock = FakeClock()
    inner = SendLog(
        clock=clock,
        latency=LatencyModel(0.5, 0.0, 1000.0),
        failures=[provider_error(429, retry_after=10.0)],
    )
    gate = LocalRateGate(rpm=1000, tpm=None, clock=clock)
    budget = LocalRetryBudget(RetryBudget(RetryBudgetRules(ratio=1.0, burst=100)))
    model = RetryingModel(RateLimitedModel(inner, gate), clock=clock, budget=budget)
    async with clock.autojumping():
        await model.complete(ChatRequest.of("first"))  # 429 at 0.5, retried at >= 10.5
        await model.complete(ChatRequest.of("second"))
    assert inner.sent_at[0] == 0.0
    assert all(t >= 10.5 for t in inner.sent_at[1:])


async def test_one_record_per_logical_call_counts_attempts():
    clock = FakeClock()
    rec = MetricsRecorder(clock)
    _inner, model = _model(clock, [provider_error(500), provider_error(529), None])
    async with clock.autojumping():
        with rec.activate():
            await model.complete(ChatRequest.of("hi", stage="map"))
    [r] = rec.records
    assert r.attempts == 3 and r.outcome == "ok" and r.stage == "map"
    assert r.output_tokens > 0


async def test_non_retryable_errors_are_not_retried():
    clock = FakeClock()
    quota = provider_error(429, code="insufficient_quota")
    for exc in (quota, provider_error(400), provider_error(404)):
        inner, model = _model(clock, [exc])
        async with clock.autojumping():
            with pytest.raises(ProviderError):
                await model.complete(ChatRequest.of("hi"))
        assert len(inner.sent_at) == 1


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_retryable_statuses_and_full_jitter(status):
    rng = random.Random(3)
    policy = RetryPolicy(base_s=1.0, cap_s=8.0)
    delays = []
    for attempt in range(1, 4):
        act = next_action(
            policy,
            attempts=attempt,
            error=provider_error(status),
            now=0.0,
            deadline=None,
            rng=rng,
        )
        assert isinstance(act, RetryAfter)
        assert 0 <= act.delay_s <= min(8.0, 2 ** (attempt - 1))
        delays.append(act.delay_s)
    assert len(set(delays)) == 3  # jittered, not a fixed schedule
    act = next_action(
        policy, attempts=4, error=provider_error(status), now=0, deadline=None, rng=rng
    )
    assert act == GiveUp("attempts")


async def test_waits_for_permits_and_rate_buckets_respect_the_deadline():
    from agentrt.flow import ConcurrencyLimitedModel, ConcurrencyLimiter, StaticLimit

    clock = FakeClock()
    inner = SendLog(clock=clock, latency=LatencyModel(30.0, 0.0, 1000.0))
    limiter = ConcurrencyLimiter(StaticLimit(1), clock=clock)
    model = RetryingModel(ConcurrencyLimitedModel(inner, limiter), clock=clock)
    async with clock.autojumping():
        holder = asyncio.create_task(model.complete(ChatRequest.of("slow")))
        await asyncio.sleep(0)
        with pytest.raises(DeadlineExceeded):
            async with fail_after(5.0, clock):
                await model.complete(ChatRequest.of("waits for the permit"))
        assert clock.now() == pytest.approx(5.0)
        await holder
    assert len(inner.sent_at) == 1 and limiter.in_use == 0

    # a rate-limit wait longer than the time left fails at once, without sleeping
    gate = LocalRateGate(rpm=1, tpm=None, clock=clock, headroom=0.0)
    model = RetryingModel(RateLimitedModel(SendLog(clock=clock), gate), clock=clock)
    async with clock.autojumping():
        await model.complete(ChatRequest.of("takes the only request of the minute"))
        t = clock.now()
        with pytest.raises(DeadlineExceeded, match="wait"):
            async with fail_after(10.0, clock):
                await model.complete(ChatRequest.of("would wait 60 s"))
        assert clock.now() == t
