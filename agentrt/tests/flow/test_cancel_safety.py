"""The flow layers give back what they hold on every way out of a call.

Permit, rate reservation, half-open breaker probe and retry budget are
released on success, failure, cancellation (a caller's deadline, a
cancelled task) and a ``break`` out of ``stream()``. Everything runs on a
FakeClock: the tests move time themselves and never sleep.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentrt._clock import FakeClock
from agentrt.flow import (
    BreakerModel,
    CircuitBreaker,
    ConcurrencyLimitedModel,
    ConcurrencyLimiter,
    DeadlineExceeded,
    LocalRateGate,
    LocalRetryBudget,
    RateLimitedModel,
    Reservation,
    RetryBudget,
    RetryBudgetRules,
    RetryingModel,
    StaticLimit,
    fail_after,
)
from agentrt.llm import ChatRequest, FakeModel, provider_error
from agentrt.tokens import LatencyModel

REQ = ChatRequest.of("hello", max_tokens=8)


async def settle() -> None:
    """Let every runnable task run until all of them wait on something."""
    for _ in range(60):
        await asyncio.sleep(0)


def latency() -> LatencyModel:
    return LatencyModel(ttft_base_s=1.0, prefill_s_per_token=0.0, decode_tps=10.0)


class CountingGate(LocalRateGate):
    """A local rate gate that counts what was reserved, settled and given back."""

    def __init__(self, rpm: int, *, clock: FakeClock) -> None:
        super().__init__(rpm, None, clock=clock, headroom=0.0)
        self.reserved = 0
        self.cancelled = 0

    async def reserve(self, tokens: float) -> Reservation | float:
        got = await super().reserve(tokens)
        if isinstance(got, Reservation):
            self.reserved += 1
        return got

    async def cancel(self, reservation: Reservation) -> None:
        self.cancelled += 1
        await super().cancel(reservation)


@dataclass
class Rig:
    clock: FakeClock
    inner: FakeModel
    limiter: ConcurrencyLimiter
    gate: CountingGate
    budget: RetryBudget
    breaker: CircuitBreaker
    model: RetryingModel
    tasks: list[asyncio.Task[object]] = field(default_factory=list)

    def sent(self) -> int:
        return len(self.inner.requests)


def rig(
    failures: list[BaseException | None] | None = None,
    *,
    limit: int = 1,
    rpm: int = 600,
    breaker: CircuitBreaker | None = None,
    deadline_s: float | None = None,
) -> Rig:
    clock = FakeClock()
    inner = FakeModel(
        clock=clock, latency=latency(), failures=failures or [], responder=lambda _: "a b c d"
    )
    limiter = ConcurrencyLimiter(StaticLimit(limit), clock=clock)
    gate = CountingGate(rpm, clock=clock)
    budget = RetryBudget(RetryBudgetRules(min_samples=1000))  # never a brownout in these tests
    brk = breaker or CircuitBreaker()
    model = RetryingModel(
        BreakerModel(RateLimitedModel(ConcurrencyLimitedModel(inner, limiter), gate), brk),
        clock=clock,
        budget=LocalRetryBudget(budget),
        deadline_s=deadline_s,
        rng=random.Random(3),
    )
    return Rig(clock, inner, limiter, gate, budget, brk, model)


def assert_nothing_held(r: Rig) -> None:
    assert r.limiter.in_use == 0
    assert r.inner.in_flight == 0
    assert r.budget.active == 0 and r.budget.retrying == 0
    # every reservation was either sent (the provider counts it) or given back
    assert r.gate.reserved == r.gate.cancelled + r.sent()
    assert r.breaker.probing == 0


async def run_to_end(r: Rig, task: asyncio.Task[object], limit: int = 200) -> None:
    for _ in range(limit):
        await settle()
        if task.done():
            return
        deadline = r.clock.next_deadline()
        assert deadline is not None, "the call waits on nothing the clock can move"
        r.clock.advance(deadline - r.clock.now())
    raise AssertionError("the call did not finish")


async def drive(cancel_at: int | None) -> tuple[int, Rig, asyncio.Task[object]]:
    """One call through every wait there is; cancel it at blocked point ``cancel_at``.

    The call first waits for the rate bucket (drained), then for the one
    permit (held by someone else for 2.5 s), then fails with a 503 and backs
    off, then meets a 429 with Retry-After and waits it out, then succeeds.
    Each time it is blocked counts as one point.
    """
    r = rig([provider_error(503), provider_error(429, retry_after=2.0), None], rpm=60)
    while isinstance(await r.gate.reserve(1), Reservation):
        pass  # someone else drains the bucket
    r.gate.reserved = 0  # what they took is not ours to count
    holder = await r.limiter.acquire()

    async def release_later() -> None:
        await r.clock.sleep(2.5)
        holder.release()

    other = asyncio.create_task(release_later())
    task: asyncio.Task[object] = asyncio.create_task(r.model.complete(REQ))
    points = 0
    while True:
        await settle()
        if task.done():
            break
        if points == cancel_at:
            task.cancel()
            await settle()
            break
        points += 1
        deadline = r.clock.next_deadline()
        assert deadline is not None
        r.clock.advance(deadline - r.clock.now())
    await run_to_end(r, other)  # type: ignore[arg-type]
    return points, r, task


async def test_cancellation_at_every_blocked_point_releases_everything():
    n, r, task = await drive(None)
    assert task.result().text  # type: ignore[attr-defined]
    assert r.sent() == 3
    assert_nothing_held(r)
    assert n >= 6  # rate wait, permit wait, attempt, backoff, attempt, pacing, attempt
    for k in range(n):
        _, r, task = await drive(k)
        assert task.cancelled(), f"point {k}"
        assert_nothing_held(r)
        # and the one permit serves the next call at once
        nxt: asyncio.Task[object] = asyncio.create_task(r.model.complete(REQ))
        await run_to_end(r, nxt)
        assert nxt.result().text, f"point {k}"  # type: ignore[attr-defined]
        assert_nothing_held(r)


async def test_with_a_limit_of_one_a_cancelled_call_does_not_block_the_next():
    r = rig(limit=1)
    first: asyncio.Task[object] = asyncio.create_task(r.model.complete(REQ))
    await settle()
    assert r.inner.in_flight == 1 and r.limiter.in_use == 1
    first.cancel()
    await settle()
    second: asyncio.Task[object] = asyncio.create_task(r.model.complete(REQ))
    await settle()
    assert r.inner.in_flight == 1, "the next call was sent at once"
    await run_to_end(r, second)
    assert second.result().text  # type: ignore[attr-defined]
    assert_nothing_held(r)


async def test_a_deadline_that_cuts_a_call_off_does_not_block_the_next():
    r = rig(limit=1, deadline_s=0.5)  # shorter than one attempt
    first: asyncio.Task[object] = asyncio.create_task(r.model.complete(REQ))
    await run_to_end(r, first)
    assert isinstance(first.exception(), DeadlineExceeded)
    assert_nothing_held(r)
    r.model.deadline_s = None
    second: asyncio.Task[object] = asyncio.create_task(r.model.complete(REQ))
    await run_to_end(r, second)
    assert second.result().text  # type: ignore[attr-defined]


async def test_a_caller_deadline_during_backoff_releases_the_retry():
    r = rig([provider_error(503)] * 3, limit=1)

    async def caller() -> object:
        async with fail_after(1.2, r.clock):  # the attempt takes 1 s; the backoff is cut off
            return await r.model.complete(REQ)

    task: asyncio.Task[object] = asyncio.create_task(caller())
    await run_to_end(r, task)
    assert isinstance(task.exception(), DeadlineExceeded)
    assert_nothing_held(r)


async def test_breaking_out_of_a_stream_releases_the_attempt():
    r = rig(limit=1)

    async def consume() -> int:
        seen = 0
        async for _ in r.model.stream(REQ):
            seen += 1
            break
        return seen

    task: asyncio.Task[object] = asyncio.create_task(consume())
    await run_to_end(r, task)
    assert task.result() == 1
    assert_nothing_held(r)
    nxt: asyncio.Task[object] = asyncio.create_task(r.model.complete(REQ))
    await run_to_end(r, nxt)
    assert nxt.result().text  # type: ignore[attr-defined]


async def test_a_stream_read_up_to_completed_is_recorded_before_the_caller_stops():
    from agentrt.llm import Completed
    from agentrt.metrics import MetricsRecorder

    r = rig(limit=1)
    rec = MetricsRecorder(r.clock)
    r.model._recorder = rec
    events = r.model.stream(REQ)

    async def until_completed() -> None:
        async for ev in events:
            if isinstance(ev, Completed):
                return  # the generator is left suspended, not closed

    task: asyncio.Task[object] = asyncio.create_task(until_completed())
    await run_to_end(r, task)
    assert [c.outcome for c in rec.records] == ["ok"]
    assert_nothing_held(r)
    await events.aclose()  # type: ignore[attr-defined]


async def test_a_cancelled_half_open_probe_does_not_leave_the_breaker_refusing():
    brk = CircuitBreaker(
        window=4, min_calls=2, failure_ratio=0.5, open_s=5.0, probes=1, min_span_s=0.0
    )
    r = rig([provider_error(400)], breaker=brk, limit=4)
    brk.record(r.clock.now(), ok=False)
    brk.record(r.clock.now(), ok=False)
    assert brk.state == "open"
    r.inner._failures = []  # the endpoint is back
    r.clock.advance(5.0)
    probe: asyncio.Task[object] = asyncio.create_task(r.model.complete(REQ))
    await settle()
    assert brk.state == "half_open" and brk.probing == 1
    probe.cancel()
    await settle()
    assert brk.probing == 0
    nxt: asyncio.Task[object] = asyncio.create_task(r.model.complete(REQ))
    await run_to_end(r, nxt)
    assert nxt.result().text  # type: ignore[attr-defined]
    assert brk.state == "closed"
    assert_nothing_held(r)


# -- property: random calls, cancellations, faults and clock advances ---------

FAULTS = {
    "ok": lambda: None,
    "503": lambda: provider_error(503),
    "529": lambda: provider_error(529),
    "429": lambda: provider_error(429, retry_after=1.5),
    "400": lambda: provider_error(400),
}

Op = tuple[str, object]
ops_strategy = st.lists(
    st.one_of(
        st.tuples(st.just("call"), st.sampled_from(sorted(FAULTS))),
        st.tuples(st.just("stream"), st.sampled_from(sorted(FAULTS))),
        st.tuples(st.just("cancel"), st.integers(0, 30)),
        st.tuples(st.just("advance"), st.floats(0.0, 4.0)),
    ),
    min_size=1,
    max_size=40,
)


def check_invariants(r: Rig) -> None:
    live = sum(1 for t in r.tasks if not t.done())
    # permits in use are exactly the attempts at the provider
    assert r.limiter.in_use == r.inner.in_flight
    assert r.limiter.in_use <= r.limiter.limit
    # the budget counts the calls in flight and never goes negative
    assert r.budget.active == live
    assert 0 <= r.budget.retrying <= live
    assert r.budget.balance >= 0
    # reservations not yet sent are held only by calls in flight
    unsent = r.gate.reserved - r.gate.cancelled - r.sent()
    assert 0 <= unsent <= live
    assert r.breaker.probing <= r.breaker.probes


async def scenario(ops: list[Op]) -> None:
    brk = CircuitBreaker(window=6, min_calls=3, failure_ratio=0.6, open_s=4.0, max_open_s=16.0)
    r = rig([], limit=2, rpm=120, breaker=brk)

    async def streamed() -> object:
        async for _ in r.model.stream(REQ):
            pass
        return None

    for kind, arg in ops:
        if kind in ("call", "stream"):
            r.inner._failures.append(FAULTS[str(arg)]())
            coro = r.model.complete(REQ) if kind == "call" else streamed()
            r.tasks.append(asyncio.create_task(coro))
        elif kind == "cancel" and r.tasks:
            r.tasks[int(arg) % len(r.tasks)].cancel()  # type: ignore[call-overload]
        elif kind == "advance":
            r.clock.advance(float(arg))  # type: ignore[arg-type]
        await settle()
        check_invariants(r)
    # let everything finish, however it ends
    for _ in range(500):
        await settle()
        check_invariants(r)
        if all(t.done() for t in r.tasks):
            break
        deadline = r.clock.next_deadline()
        assert deadline is not None
        r.clock.advance(deadline - r.clock.now())
    assert all(t.done() for t in r.tasks)
    for t in r.tasks:
        if not t.cancelled():
            t.exception()  # retrieved: failures are expected here
    assert_nothing_held(r)
    # an open breaker reaches half-open and closes again after successes
    r.inner._failures = []
    r.clock.advance(brk.max_open_s)
    for _ in range(brk.probes + 1):
        t: asyncio.Task[object] = asyncio.create_task(r.model.complete(REQ))
        await run_to_end(r, t)
        assert t.result().text  # type: ignore[attr-defined]
    assert brk.state == "closed"
    assert_nothing_held(r)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops_strategy)
def test_flow_control_invariants_hold_under_any_interleaving(ops: list[Op]) -> None:
    asyncio.run(scenario(ops))


def test_the_property_test_sees_a_leak_when_there_is_one() -> None:
    """The invariant check is not vacuous: a permit kept by nobody breaks it."""

    async def leak() -> None:
        r = rig([], limit=2)
        await r.limiter.acquire()  # taken and never released, outside any call
        with pytest.raises(AssertionError):
            check_invariants(r)

    asyncio.run(leak())
