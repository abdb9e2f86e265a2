"""ResilientModel: flow control around any chat model.

A :class:`~agentrt.llm.WrapperModel` over a :class:`~agentrt.llm.ChatModel`
(OpenAI, Anthropic, llama.cpp, the fake, another wrapper), in the manner of
pydantic-ai's wrapper models: it implements the same protocol and delegates,
and ``unwrap()`` reaches the backend. It is the one concurrency layer: the
backend declares ``max_concurrency`` and this model holds it. Every call
gets, in this order: the caller's deadline, the endpoint's circuit breaker,
client-side adaptive throttling, RPM/TPM reservation, a concurrency permit,
then the attempt itself (with an optional per-attempt timeout).

Admission is an async context manager (:class:`_Admission`): whatever it
took — permit, rate reservation, half-open breaker probe — is given back in
its ``__aexit__`` on every way out of an attempt: success, failure,
``CancelledError`` (a caller's deadline, ``deadline_s``, a cancelled task)
and ``GeneratorExit`` (a ``break`` out of :meth:`ResilientModel.stream`).
The call's share of the retry budget is given back the same way.

A failed attempt goes through :func:`~agentrt.flow._retry.next_action` and
the retry budget; a 429 with ``Retry-After`` is pacing, not failure: it
slows the rate gate and the adaptive limit, the call waits and sends again
without spending from the budget. Every wait sleeps on the injected clock
and never past the deadline.

Metrics: the wrapped client records one :class:`CallRecord` per attempt;
those are captured in a private recorder and folded into ONE record per
logical call, whose ``attempts`` is the number of requests sent and whose
``queue_wait_s`` is the time spent waiting for rate buckets and permits.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import AsyncIterator
from types import TracebackType

from agentrt._checkpoint import cancel_requests, checkpoint
from agentrt._clock import Clock
from agentrt._errors import ProviderError
from agentrt.flow._adaptive import StaticLimit
from agentrt.flow._attempt import (
    CallState,
    Ticket,
    aclose_events,
    call_record,
    is_drop,
    is_pacing,
    settle,
)
from agentrt.flow._breaker import CircuitBreaker, CircuitOpen
from agentrt.flow._deadline import DeadlineExceeded, current_deadline, fail_after
from agentrt.flow._gate import LocalRetryBudget, RateGate, SharedBudget
from agentrt.flow._limiter import ConcurrencyLimiter
from agentrt.flow._ratelimit import Reservation, parse_rate_headers
from agentrt.flow._retry import GiveUp, RetryPolicy, is_retryable, next_action
from agentrt.flow._throttle import AdaptiveThrottle, Throttled
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult, Completed, StreamEvent
from agentrt.llm._wrapper import WrapperModel, max_concurrency
from agentrt.metrics._recorder import MetricsRecorder, current_recorder
from agentrt.tokens._counting import EstimateCounter, TokenCounter

__all__ = ["ResilientModel", "is_pacing"]


class _Admission:
    """``async with _Admission(model, request, call) as ticket:`` one attempt."""

    __slots__ = ("call", "model", "request", "ticket")

    def __init__(self, model: ResilientModel, request: ChatRequest, call: CallState) -> None:
        self.model = model
        self.request = request
        self.call = call
        self.ticket = Ticket()

    async def __aenter__(self) -> Ticket:
        try:
            await self.model._admit(self.request, self.call, self.ticket)
        except BaseException:
            await self.model._release(self.ticket)
            raise
        return self.ticket

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.model._release(self.ticket)


class ResilientModel(WrapperModel):
    """A chat model with limits, retries, deadlines and a breaker around ``inner``.

    Every piece is optional except the retry policy and budget: ``limiter``
    (a :class:`ConcurrencyLimiter`, static or adaptive; without one, a
    static limit at the backend's declared ``max_concurrency``, if any: the
    backend client does not limit itself), ``rate`` (a
    :class:`~agentrt.flow._gate.RateGate`, local or Redis), ``throttle``,
    ``breaker``, ``attempt_timeout_s`` and ``deadline_s`` (the whole call,
    combined with any enclosing deadline scope). ``budget`` is the retry
    budget this model shares with the others given the same one; without
    one, the model has its own (see :func:`agentrt.flow.retry_budget` for one
    built from configuration).
    """

    def __init__(
        self,
        inner: ChatModel,
        *,
        limiter: ConcurrencyLimiter | None = None,
        rate: RateGate | None = None,
        budget: SharedBudget | None = None,
        policy: RetryPolicy | None = None,
        throttle: AdaptiveThrottle | None = None,
        breaker: CircuitBreaker | None = None,
        attempt_timeout_s: float | None = None,
        deadline_s: float | None = None,
        refund_unused_output: bool = False,
        counter: TokenCounter | None = None,
        rng: random.Random | None = None,
        name: str | None = None,
        clock: Clock | None = None,
        recorder: MetricsRecorder | None = None,
    ) -> None:
        super().__init__(inner, name=name, clock=clock)
        self._recorder = recorder
        declared = max_concurrency(inner)
        if limiter is None and declared:
            # the one concurrency layer: the endpoint's declared limit, held here
            limiter = ConcurrencyLimiter(StaticLimit(declared), clock=self.clock)
        self.limiter = limiter
        self.rate = rate
        self.budget: SharedBudget = budget if budget is not None else LocalRetryBudget()
        self.policy = policy or RetryPolicy()
        self.throttle = throttle
        self.breaker = breaker
        self.attempt_timeout_s = attempt_timeout_s
        self.deadline_s = deadline_s
        self.refund_unused_output = refund_unused_output
        self.counter: TokenCounter = counter or EstimateCounter()
        self.rng = rng or random.Random()
        self.attempts_sent = 0  # requests sent by this client, all calls
        self.calls_in_flight = 0

    # -- public API -------------------------------------------------------
    async def complete(self, request: ChatRequest) -> ChatResult:
        call = CallState(start=self.clock.now())
        result: ChatResult | None = None
        error: BaseException | None = None
        await self._begin()
        try:
            async with self._overall_deadline():
                while True:
                    failure: Exception
                    async with _Admission(self, request, call) as ticket:
                        try:
                            async with self._attempt(call, ticket):
                                result = await self.inner.complete(request)
                        except Exception as exc:
                            failure = exc
                            await self._on_failure(exc, ticket)
                        else:
                            await self._on_success(request, result, ticket)
                            return result
                    await self._next_attempt(failure, call)
        except BaseException as exc:
            error = exc
            raise
        finally:
            await self._end(request, call, result, error, streamed=False)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Stream with the same protection; an attempt is retried only before its first text.

        Leaving the loop early (``break``) closes this generator: the
        attempt in flight is cancelled and everything it held given back.
        """
        call = CallState(start=self.clock.now())
        result: ChatResult | None = None
        error: BaseException | None = None
        await self._begin()
        try:
            async with self._overall_deadline():
                while result is None:
                    failure: Exception
                    async with _Admission(self, request, call) as ticket:
                        yielded = False
                        try:
                            async with self._attempt(call, ticket):
                                events = self.inner.stream(request)
                                try:
                                    async for ev in events:
                                        if isinstance(ev, Completed):
                                            result = ev.result
                                            continue
                                        yielded = True
                                        yield ev
                                finally:
                                    # close the inner stream now, not when it is collected
                                    await aclose_events(events)
                            if result is None:
                                raise ProviderError(
                                    f"stream from {self.name!r} ended without a result"
                                )
                        except Exception as exc:
                            failure = exc
                            await self._on_failure(exc, ticket)
                            if yielded:
                                # text already reached the caller: a retry would repeat it
                                raise
                        else:
                            await self._on_success(request, result, ticket)
                            break
                    await self._next_attempt(failure, call)
        except BaseException as exc:
            error = exc
            raise
        finally:
            # before the last event: a caller that stops at Completed (and
            # never resumes this generator) still gets the call recorded
            await self._end(request, call, result, error, streamed=True)
        assert result is not None
        yield Completed(result)

    # -- the steps of a call ---------------------------------------------
    async def _begin(self) -> None:
        await self.budget.call_started()
        self.calls_in_flight += 1

    @contextlib.asynccontextmanager
    async def _overall_deadline(self) -> AsyncIterator[None]:
        if self.deadline_s is None:
            yield
            return
        async with fail_after(self.deadline_s, self.clock):
            yield

    def _check_deadline(self, wait: float = 0.0) -> None:
        d = current_deadline()
        if d is not None and d.remaining() <= wait:
            what = "the next attempt" if wait <= 0 else f"a {wait:.2f} s wait"
            raise DeadlineExceeded(f"deadline reached before {what} for {self.name!r}")

    async def _admit(self, request: ChatRequest, call: CallState, ticket: Ticket) -> None:
        """Wait for everything an attempt needs, noting it in ``ticket`` as it is taken."""
        self._check_deadline()
        now = self.clock.now()
        if self.breaker is not None:
            if not self.breaker.allow(now):
                raise CircuitOpen(self.name, self.breaker.retry_in(now))
            if self.breaker.state == "half_open":
                ticket.probe = self.breaker.episode
        if self.throttle is not None and self.throttle.should_reject(now, self.rng):
            raise Throttled(self.name, self.throttle.reject_probability(now))
        waited_from = self.clock.now()
        if self.rate is not None:
            tokens = self._estimate(request)
            seen = cancel_requests()
            while True:
                got = await self.rate.reserve(tokens)
                if isinstance(got, Reservation):
                    ticket.reservation = got
                    break
                if got == float("inf"):
                    raise ProviderError(
                        f"a call of {tokens:.0f} tokens can never fit {self.name!r}'s "
                        "tokens-per-minute limit; lower max_tokens or the prompt",
                        retryable=False,
                    )
                self._check_deadline(got)
                checkpoint(seen)  # nothing held here; a store may have lost our cancel
                await self.clock.sleep(got)
        if self.limiter is not None:
            ticket.permit = await self.limiter.acquire()
        # waits are over: the attempt must still start before the deadline
        self._check_deadline()
        call.queue_wait += self.clock.now() - waited_from

    async def _release(self, ticket: Ticket) -> None:
        """Give back what ``ticket`` holds; idempotent, safe under cancellation."""
        if ticket.permit is not None:
            ticket.permit.release()  # idempotent
        if ticket.probe is not None and not ticket.judged and self.breaker is not None:
            # a probe that ended without an outcome must not hold the half-open slot
            self.breaker.cancel_probe(ticket.probe)
            ticket.judged = True
        if ticket.reservation is not None and not ticket.settled and self.rate is not None:
            ticket.settled = True
            if not ticket.sent:
                await settle(self.rate.cancel(ticket.reservation))
            # sent and cut off: the provider counted the request, keep the charge

    @contextlib.asynccontextmanager
    async def _attempt(self, call: CallState, ticket: Ticket) -> AsyncIterator[None]:
        """Send one attempt: count it, capture its record, bound it by the timeout."""
        call.attempts += 1
        self.attempts_sent += 1
        ticket.sent = True
        scratch = MetricsRecorder(self.clock)
        try:
            with scratch.activate():
                if self.attempt_timeout_s is None:
                    yield
                else:
                    try:
                        async with fail_after(self.attempt_timeout_s, self.clock):
                            yield
                    except DeadlineExceeded:
                        d = current_deadline()
                        if d is not None and d.expired():
                            raise
                        raise ProviderError(
                            f"{self.name} did not answer within {self.attempt_timeout_s:g} s",
                            code="timeout",
                        ) from None
        finally:
            call.scratch.extend(scratch.records)

    async def _on_failure(self, exc: Exception, ticket: Ticket) -> None:
        """Account for a failed attempt while its ticket is still held."""
        now = self.clock.now()
        pacing = is_pacing(exc)
        if ticket.permit is not None and is_drop(exc):
            ticket.permit.dropped()  # a 429 slows the adaptive limit too
        if not pacing:
            retryable = is_retryable(exc)
            if self.breaker is not None:
                self.breaker.record(now, ok=not retryable)
                ticket.judged = True
            if self.throttle is not None:
                self.throttle.record(now, accepted=not retryable)
            if getattr(exc, "status", None) is not None or retryable:
                await self.budget.record(ok=not retryable)
        if self.rate is not None:
            status = getattr(exc, "status", None)
            if ticket.reservation is not None and status is not None:
                # the provider answered with an error: it did not charge the call
                ticket.settled = True
                await self.rate.settle(ticket.reservation, 0.0)
            headers = getattr(exc, "headers", None)
            if headers:
                await self.rate.observe(parse_rate_headers(headers), 0.0)
            if pacing:
                await self.rate.block_for(float(getattr(exc, "retry_after", 0.0)))

    async def _on_success(self, request: ChatRequest, result: ChatResult, ticket: Ticket) -> None:
        now = self.clock.now()
        if ticket.permit is not None:
            ticket.permit.succeeded(work=1.0 + result.usage.output_tokens)
        if self.breaker is not None:
            self.breaker.record(now, ok=True)
            ticket.judged = True
        if self.throttle is not None:
            self.throttle.record(now, accepted=True)
        await self.budget.record(ok=True)
        if self.rate is not None:
            if ticket.reservation is not None:
                out = (
                    result.usage.output_tokens if self.refund_unused_output else request.max_tokens
                )
                ticket.settled = True
                await self.rate.settle(ticket.reservation, result.usage.input_tokens + out)
            if result.headers:
                age = result.timing.wall_s - result.timing.queue_wait_s
                await self.rate.observe(parse_rate_headers(result.headers), age)

    async def _next_attempt(self, exc: Exception, call: CallState) -> None:
        """After a failed attempt (its ticket given back): wait for the next, or re-raise."""
        if call.retrying:
            call.retrying = False
            await self.budget.retry_finished()
        if is_pacing(exc):
            await self._pace(exc, call)
            return
        call.failures += 1
        d = current_deadline()
        action = next_action(
            self.policy,
            attempts=call.failures,
            error=exc,
            now=self.clock.now(),
            deadline=None if d is None else d.at,
            rng=self.rng,
        )
        if isinstance(action, GiveUp):
            if action.reason == "deadline":
                raise DeadlineExceeded(
                    f"no retry of {self.name!r} fits before the deadline after: {exc}"
                ) from exc
            raise exc
        # back off first: a retry holds one of the budget's in-flight retries
        # only while its request is out, as Envoy counts active retries
        await self.clock.sleep(action.delay_s)
        seen = cancel_requests()
        while True:
            verdict = await self.budget.ask_retry()
            if verdict == "granted":
                break
            if verdict == "refused" or call.busy_waits >= self.policy.max_busy_waits:
                raise exc
            # the in-flight share is taken by peers' retries: one ends soon
            call.busy_waits += 1
            delay = self.policy.backoff(call.failures, self.rng)
            self._check_deadline(delay)
            checkpoint(seen)  # nothing held here; a store may have lost our cancel
            await self.clock.sleep(delay)
        call.retrying = True

    async def _pace(self, exc: Exception, call: CallState) -> None:
        """A 429 with Retry-After: wait as asked (within the deadline) and go again."""
        call.paced += 1
        if call.paced > self.policy.max_paced:
            raise exc
        wait = float(getattr(exc, "retry_after", 0.0))
        d = current_deadline()
        if d is not None and d.remaining() <= wait:
            raise DeadlineExceeded(
                f"no retry of {self.name!r} fits before the deadline "
                f"(it asked to wait {wait:.2f} s): {exc}"
            ) from exc
        await self.clock.sleep(wait)

    def _estimate(self, request: ChatRequest) -> float:
        return float(
            self.counter.count_messages(m.content for m in request.messages) + request.max_tokens
        )

    async def _end(
        self,
        request: ChatRequest,
        call: CallState,
        result: ChatResult | None,
        error: BaseException | None,
        *,
        streamed: bool,
    ) -> None:
        self.calls_in_flight -= 1
        if call.retrying:
            call.retrying = False
            await settle(self.budget.retry_finished())
        await settle(self.budget.call_finished())
        self._record_call(request, call, result, error, streamed=streamed)

    def _record_call(
        self,
        request: ChatRequest,
        call: CallState,
        result: ChatResult | None,
        error: BaseException | None,
        *,
        streamed: bool,
    ) -> None:
        rec = self._recorder or current_recorder()
        if rec is not None:
            now = self.clock.now()
            rec.add(
                call_record(
                    rec, request, call, result, error, now=now, model=self.model, streamed=streamed
                )
            )
