"""The sans-IO cores as pure state machines: no clock, no I/O."""

from __future__ import annotations

import math
import random

import pytest

from agentrt.flow import (
    AdaptiveLimit,
    AdaptiveThrottle,
    CircuitBreaker,
    HeaderView,
    RateBuckets,
    Reservation,
    RetryBudget,
    RetryBudgetRules,
    Sample,
    parse_duration,
    parse_rate_headers,
)


def _knee_latency(limit: int, knee: int, base: float = 2.0) -> float:
    """A bottleneck that serves ``knee`` calls at full speed, then shares."""
    return base * max(1.0, limit / knee)


def _drive(alg: AdaptiveLimit, latency_of, rounds: int = 400) -> list[int]:
    """Closed loop: each round runs ``limit`` calls to completion together."""
    now = 0.0
    seen = []
    for _ in range(rounds):
        limit = alg.limit
        lat = latency_of(limit)
        start = now
        now += lat
        for _ in range(limit):
            alg.on_sample(now, Sample(started_at=start, latency_s=lat, in_flight=limit))
        seen.append(alg.limit)
    return seen


@pytest.mark.parametrize("knee", [2, 5, 10, 24])
def test_adaptive_limit_settles_at_the_knee(knee):
    alg = AdaptiveLimit()
    seen = _drive(alg, lambda n: _knee_latency(n, knee))
    tail = seen[len(seen) // 2 :]
    median = sorted(tail)[len(tail) // 2]
    # at the knee, or above it by less than the 5% latency tolerance
    assert knee <= median <= math.floor(knee * 1.06)
    assert sum(tail) / len(tail) <= median * 1.1  # probes above it are rare
    assert min(tail) >= knee - 1


def test_adaptive_limit_cuts_on_refusals():
    alg = AdaptiveLimit(initial=20, min_limit=1)
    alg.on_sample(1.0, Sample(started_at=0.5, latency_s=0.5, in_flight=20, dropped=True))
    assert alg.limit == 15
    # refusals of calls sent before the cut do not cut again
    alg.on_sample(1.1, Sample(started_at=0.6, latency_s=0.5, in_flight=20, dropped=True))
    assert alg.limit == 15
    alg.on_sample(2.0, Sample(started_at=1.5, latency_s=0.5, in_flight=15, dropped=True))
    assert alg.limit == 11


def test_adaptive_limit_does_not_grow_while_the_caller_is_the_bottleneck():
    alg = AdaptiveLimit(initial=10)
    now = 0.0
    for _ in range(50):
        start = now
        now += 1.0
        for _ in range(10):  # only 3 of 10 permits ever in use, latency flat
            alg.on_sample(now, Sample(started_at=start, latency_s=1.0, in_flight=3))
    assert alg.limit == 10
    for _ in range(3):  # once permits are used, flat latency lets it grow
        start = now
        now += 1.0
        for _ in range(10):
            alg.on_sample(now, Sample(started_at=start, latency_s=1.0, in_flight=10))
    assert alg.limit > 10


def test_retry_budget_in_flight_share_with_minimum():
    b = RetryBudget(RetryBudgetRules(share=0.2, min_in_flight=3, ratio=1.0, burst=1000))
    for _ in range(10):
        b.call_started()
    assert [b.try_retry() for _ in range(5)] == [True, True, True, False, False]
    for _ in range(90):
        b.call_started()
    assert b.in_flight_cap() == 20
    assert sum(b.try_retry() for _ in range(40)) == 17  # 20 in flight in all
    b.retry_finished()
    assert b.try_retry()


def test_retry_budget_ratio_over_time_applies_in_a_brownout():
    b = RetryBudget(
        RetryBudgetRules(share=1.0, min_in_flight=1000, ratio=0.1, burst=3, brownout_ratio=0.35)
    )
    granted = 0
    for i in range(1000):
        b.call_started()
        b.record(ok=i % 2 == 0)  # half the attempts fail: a brownout
        if b.try_retry():
            granted += 1
            b.retry_finished()
        b.call_finished()
    assert b.in_brownout()
    assert granted <= 0.1 * 1000 + 3 + b.rules.min_samples
    assert granted >= 0.1 * 1000 - 1


def test_retry_budget_retries_a_steady_error_rate_in_full():
    b = RetryBudget(
        RetryBudgetRules(share=1.0, min_in_flight=1000, ratio=0.1, burst=3, brownout_ratio=0.35)
    )
    granted = 0
    for i in range(1000):
        b.call_started()
        b.record(ok=i % 5 != 0)  # 20% of attempts fail, steadily
        if i % 5 == 0 and b.try_retry():
            granted += 1
            b.retry_finished()
        b.call_finished()
    assert not b.in_brownout()
    assert granted == 200


def test_retry_budget_says_busy_or_refused():
    b = RetryBudget(
        RetryBudgetRules(share=0.2, min_in_flight=1, ratio=0.0, burst=0.0, min_samples=2)
    )
    b.call_started()
    assert b.ask_retry() == "granted"
    assert b.ask_retry() == "busy"  # one retry in flight already
    b.retry_finished()
    b.record(ok=False)
    b.record(ok=False)
    assert b.ask_retry() == "refused"  # a brownout: no more retries


def test_adaptive_throttle_follows_the_sre_formula():
    t = AdaptiveThrottle(k=2.0, window_s=60)
    for i in range(100):
        t.record(i * 0.1, accepted=(i % 2 == 0))  # 50% accepted: no rejection
    assert t.reject_probability(10.0) == 0.0
    for i in range(100):
        t.record(10 + i * 0.1, accepted=False)  # now 200 requests, 50 accepts
    assert t.reject_probability(20.0) == pytest.approx((200 - 2 * 50) / 201)
    assert t.reject_probability(200.0) == 0.0  # the window forgets
    rng = random.Random(0)
    rejected = sum(t.should_reject(20.0, rng) for _ in range(10))
    assert rejected == 0


def test_breaker_opens_probes_and_closes():
    b = CircuitBreaker(window=10, min_calls=5, failure_ratio=0.8, open_s=10.0)
    for i in range(5):
        assert b.allow(i)
        b.record(i, ok=False)
    assert b.state == "open" and not b.allow(5.0)
    assert b.allow(14.5)  # half-open: one probe
    assert not b.allow(14.6)
    b.record(15.0, ok=False)  # probe failed: open twice as long
    assert b.state == "open" and b.open_s == 20.0
    assert not b.allow(30.0) and b.allow(35.1)
    b.record(36.0, ok=True)
    assert b.state == "closed"


def test_a_success_never_opens_the_breaker():
    # Failures short of the minimum fill the window; the success that brings
    # it to the minimum is the endpoint recovering, not a reason to open
    # (found by the cancel-safety property test).
    b = CircuitBreaker(window=6, min_calls=3, failure_ratio=0.6, open_s=4.0)
    b.record(1.0, ok=False)
    b.record(3.0, ok=False)
    b.record(19.0, ok=True)
    assert b.state == "closed" and b.allow(19.1)
    b.record(20.0, ok=False)  # 3 of 4 failed: a failure may open it
    assert b.state == "open"


def test_breaker_stays_closed_on_a_half_failing_endpoint():
    b = CircuitBreaker()
    rng = random.Random(5)
    for i in range(5000):
        b.record(float(i), ok=rng.random() < 0.5)
    assert b.opens == 0


def test_rate_buckets_reserve_wait_and_never_fit():
    r = RateBuckets(rpm=60, tpm=6000, now=0.0)
    assert isinstance(r.try_reserve(0.0, 5000), Reservation)
    wait = r.try_reserve(0.0, 2000)
    assert wait == pytest.approx(10.0)  # 1000 short at 100 tokens/s
    assert isinstance(r.try_reserve(10.0, 2000), Reservation)
    assert r.try_reserve(10.0, 7000) == math.inf


def test_rate_buckets_corrections_and_retry_after():
    r = RateBuckets(rpm=None, tpm=6000, now=0.0)
    res = r.try_reserve(0.0, 3000)
    assert isinstance(res, Reservation)
    r.settle(0.0, res, 1000)  # charged less than reserved: refund 2000
    assert r.tokens is not None and r.tokens.level == pytest.approx(5000)
    r.observe(0.0, HeaderView(remaining_tokens=1200), as_of=0.0)
    assert r.tokens.level == pytest.approx(1200)
    r.observe(0.0, HeaderView(remaining_tokens=5900), as_of=0.0)
    assert r.tokens.level == pytest.approx(1200)  # never trusts more than it has
    r.block_until(30.0)
    assert r.try_reserve(5.0, 10) == pytest.approx(25.0)
    assert isinstance(r.try_reserve(30.0, 10), Reservation)


def test_header_parsing():
    v = parse_rate_headers(
        {"X-RateLimit-Remaining-Tokens": "1500", "x-ratelimit-remaining-requests": "9"}
    )
    assert v == HeaderView(remaining_requests=9.0, remaining_tokens=1500.0)
    a = parse_rate_headers({"anthropic-ratelimit-tokens-remaining": "77"})
    assert a.remaining_tokens == 77.0
    assert parse_duration("250ms") == 0.25
    assert parse_duration("1.5s") == 1.5
    assert parse_duration("2m3s") == 123.0
    assert parse_duration("7") == 7.0
    assert parse_duration("soon") is None
