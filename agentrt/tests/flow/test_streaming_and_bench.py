"""Streaming through RetryingModel, and a small brownout run of the benchmark."""

from __future__ import annotations

import dataclasses
import random

import pytest

from agentrt._clock import FakeClock
from agentrt._errors import ProviderError
from agentrt.flow import LocalRetryBudget, RetryBudget, RetryBudgetRules, RetryingModel
from agentrt.llm import ChatRequest, Completed, FakeModel, TextDelta, provider_error
from agentrt.metrics import MetricsRecorder
from agentrt.tokens import LatencyModel


async def test_stream_is_retried_before_its_first_text_only():
    clock = FakeClock()
    inner = FakeModel(
        clock=clock, latency=LatencyModel(0.2, 0.0, 100.0), failures=[provider_error(503)]
    )
    budget = LocalRetryBudget(RetryBudget(RetryBudgetRules(ratio=1.0, burst=10)))
    model = RetryingModel(inner, clock=clock, budget=budget, rng=random.Random(0))
    rec = MetricsRecorder(clock)
    events = []
    async with clock.autojumping():
        with rec.activate():
            async for ev in model.stream(ChatRequest.of("hi", max_tokens=8)):
                events.append(ev)
    assert isinstance(events[-1], Completed)
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == events[-1].result.text  # nothing repeated by the retry
    [r] = rec.records
    assert r.attempts == 2 and r.streamed


async def test_retry_budget_exhaustion_surfaces_the_provider_error():
    clock = FakeClock()
    inner = FakeModel(clock=clock, failures=[provider_error(503)] * 10)
    budget = LocalRetryBudget(
        RetryBudget(RetryBudgetRules(share=0.0, min_in_flight=0))
    )  # no retries at all
    model = RetryingModel(inner, clock=clock, budget=budget)
    async with clock.autojumping():
        with pytest.raises(ProviderError, match="503"):
            await model.complete(ChatRequest.of("hi"))
    assert len(inner.requests) == 1
    assert budget.budget.denied == 1 and budget.budget.active == 0


async def test_brownout_benchmark_small_run():
    from agentrt.bench.brownout import BrownoutOptions, run_brownout

    result = await run_brownout(
        BrownoutOptions(
            calls=300,
            rate=10.0,
            window_start_s=10.0,
            window_end_s=20.0,
            failure_share=0.5,
            max_tokens=4,
            seed=1,
        )
    )
    f = result.figures
    assert f["attempts_agentrt"] <= 1.1 * f["requests"] + 3
    assert f["attempts_naive"] > f["attempts_agentrt"]


async def test_faults_benchmark_tells_a_steady_error_rate_from_a_brownout():
    from agentrt.bench.faults import FaultsOptions, run_faults

    opts = FaultsOptions(calls=100, in_flight=16, max_tokens=16, retry_after_s=1.0)
    result = await run_faults(dataclasses.replace(opts, seed=7, seeds=2))
    f = result.figures
    # steady 10% 429 (Retry-After) + 10% 503: every call finishes, at ~1.25 requests each
    assert f["steady_failed"] == 0
    assert f["steady_requests_per_call"] <= 1.35
    # a 50% brownout: the budget holds retries back; the SDK's defaults do not
    assert f["brownout_attempts_per_request"] <= 1.1
    assert f["sdk_brownout_attempts_per_request"] > 1.5
    assert all(ok for _, ok in result.checks)
