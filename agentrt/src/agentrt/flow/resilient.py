"""ResilientModel: flow control around any model client.

Wraps a :class:`~agentrt.llm.ModelClient` (OpenAI, Anthropic, llama.cpp, the
fake) and gives every call, in this order: the caller's deadline, the
endpoint's circuit breaker, client-side adaptive throttling, RPM/TPM
reservation, a concurrency permit, then the attempt itself (with an
optional per-attempt timeout). A failed attempt goes through
:func:`~agentrt.flow.retry.next_action` and the shared retry budget; the
backoff sleeps on the injected clock and never past the deadline.

Metrics: the wrapped client records one :class:`CallRecord` per attempt;
those are captured in a private recorder and folded into ONE record per
logical call, whose ``attempts`` is the number of requests sent and whose
``queue_wait_s`` is the time spent waiting for rate buckets and permits.
(Give the inner client no ``recorder=`` of its own, or its per-attempt
records go there as well.)
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from agentrt.clock import Clock, SystemClock
from agentrt.errors import ProviderError
from agentrt.flow.breaker import CircuitBreaker, CircuitOpen
from agentrt.flow.deadline import DeadlineExceeded, current_deadline, fail_after
from agentrt.flow.gate import LocalRetryBudget, RateGate, SharedBudget
from agentrt.flow.limiter import ConcurrencyLimiter, Permit
from agentrt.flow.ratelimit import Reservation, parse_rate_headers
from agentrt.flow.retry import GiveUp, RetryPolicy, is_retryable, next_action
from agentrt.flow.throttle import AdaptiveThrottle, Throttled
from agentrt.llm.client import ModelClient, RawResult
from agentrt.llm.types import ChatRequest, ChatResult, Completed, StreamEvent
from agentrt.metrics.record import CallRecord, Outcome
from agentrt.metrics.recorder import MetricsRecorder, current_stage
from agentrt.tokens.counting import EstimateCounter, TokenCounter

__all__ = ["ResilientModel", "default_budget"]

_DEFAULT_BUDGET: LocalRetryBudget | None = None


def default_budget() -> LocalRetryBudget:
    """The process-wide retry budget every ResilientModel shares unless given one."""
    global _DEFAULT_BUDGET
    if _DEFAULT_BUDGET is None:
        _DEFAULT_BUDGET = LocalRetryBudget()
    return _DEFAULT_BUDGET


def _is_drop(exc: BaseException) -> bool:
    """Refusals and timeouts: the congestion signals of the concurrency limit."""
    if isinstance(exc, ProviderError):
        return exc.status in (429, 529) or exc.code == "timeout"
    return False


@dataclass(slots=True)
class _Call:
    """Book-keeping of one logical call across its attempts."""

    start: float
    attempts: int = 0
    queue_wait: float = 0.0
    retrying: bool = False
    scratch: list[CallRecord] = field(default_factory=list)


class ResilientModel(ModelClient):
    """A model client with limits, retries, deadlines and a breaker around ``inner``.

    Every piece is optional except the retry policy and budget: ``limiter``
    (a :class:`ConcurrencyLimiter`, static or adaptive), ``rate`` (a
    :class:`~agentrt.flow.gate.RateGate`, local or Redis), ``throttle``,
    ``breaker``, ``attempt_timeout_s`` and ``deadline_s`` (the whole call,
    combined with any enclosing deadline scope). ``budget`` defaults to the
    process-wide :func:`default_budget`.
    """

    def __init__(
        self,
        inner: ModelClient,
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
        super().__init__(
            model=inner.model,
            name=name or inner.name,
            clock=clock or inner.clock or SystemClock(),
            recorder=recorder,
        )
        self.inner = inner
        self.limiter = limiter
        self.rate = rate
        self.budget: SharedBudget = budget if budget is not None else default_budget()
        self.policy = policy or RetryPolicy()
        self.throttle = throttle
        self.breaker = breaker
        self.attempt_timeout_s = attempt_timeout_s
        self.deadline_s = deadline_s
        self.refund_unused_output = refund_unused_output
        self.counter: TokenCounter = counter or EstimateCounter()
        self.rng = rng or random.Random()
        self.attempts_sent = 0  # requests sent by this client, all calls

    # the base class's primitives are not used: complete/stream are overridden
    async def _complete(self, request: ChatRequest, model: str) -> RawResult:
        raise NotImplementedError

    def _stream(self, request: ChatRequest, model: str) -> AsyncIterator[str | RawResult]:
        raise NotImplementedError

    async def aclose(self) -> None:
        await self.inner.aclose()

    # -- public API -------------------------------------------------------
    async def complete(self, request: ChatRequest) -> ChatResult:
        call = _Call(start=self.clock.now())
        await self.budget.call_started()
        result: ChatResult | None = None
        error: BaseException | None = None
        try:
            async with self._overall_deadline():
                while True:
                    reservation, permit = await self._admit(request, call)
                    try:
                        async with self._attempt(call):
                            result = await self.inner.complete(request)
                    except Exception as exc:
                        await self._after_failure(exc, reservation, permit, call)
                        continue
                    await self._after_success(request, result, reservation, permit, call)
                    return result
        except BaseException as exc:
            error = exc
            raise
        finally:
            await self._end(request, call, result, error, streamed=False)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Stream with the same protection; an attempt is retried only before its first text."""
        call = _Call(start=self.clock.now())
        await self.budget.call_started()
        result: ChatResult | None = None
        error: BaseException | None = None
        try:
            async with self._overall_deadline():
                while result is None:
                    reservation, permit = await self._admit(request, call)
                    yielded = False
                    try:
                        async with self._attempt(call):
                            async for ev in self.inner.stream(request):
                                if isinstance(ev, Completed):
                                    result = ev.result
                                    continue
                                yielded = True
                                yield ev
                    except Exception as exc:
                        if yielded:
                            # text already reached the caller: a retry would repeat it
                            self._note_failure(exc, permit)
                            raise
                        await self._after_failure(exc, reservation, permit, call)
                        continue
                    if result is None:
                        raise ProviderError(f"stream from {self.name!r} ended without a result")
                    await self._after_success(request, result, reservation, permit, call)
            yield Completed(result)
        except BaseException as exc:
            error = exc
            raise
        finally:
            await self._end(request, call, result, error, streamed=True)

    # -- the steps of a call ---------------------------------------------
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

    async def _admit(
        self, request: ChatRequest, call: _Call
    ) -> tuple[Reservation | None, Permit | None]:
        """Wait for everything an attempt needs; raise if it must not go out."""
        self._check_deadline()
        now = self.clock.now()
        if self.breaker is not None and not self.breaker.allow(now):
            raise CircuitOpen(self.name, self.breaker.retry_in(now))
        if self.throttle is not None and self.throttle.should_reject(now, self.rng):
            raise Throttled(self.name, self.throttle.reject_probability(now))
        waited_from = self.clock.now()
        reservation: Reservation | None = None
        if self.rate is not None:
            tokens = self._estimate(request)
            while True:
                got = await self.rate.reserve(tokens)
                if isinstance(got, Reservation):
                    reservation = got
                    break
                if got == float("inf"):
                    raise ProviderError(
                        f"a call of {tokens:.0f} tokens can never fit {self.name!r}'s "
                        "tokens-per-minute limit; lower max_tokens or the prompt",
                        retryable=False,
                    )
                self._check_deadline(got)
                await self.clock.sleep(got)
        permit: Permit | None = None
        try:
            if self.limiter is not None:
                permit = await self.limiter.acquire()
            # waits are over: the attempt must still start before the deadline
            self._check_deadline()
        except BaseException:
            if permit is not None:
                permit.release()
            if reservation is not None and self.rate is not None:
                await self.rate.settle(reservation, 0.0)
            raise
        call.queue_wait += self.clock.now() - waited_from
        return reservation, permit

    @contextlib.asynccontextmanager
    async def _attempt(self, call: _Call) -> AsyncIterator[None]:
        """Send one attempt: count it, capture its record, bound it by the timeout."""
        call.attempts += 1
        self.attempts_sent += 1
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

    def _note_failure(self, exc: BaseException, permit: Permit | None) -> None:
        now = self.clock.now()
        retryable = is_retryable(exc)
        if permit is not None:
            if _is_drop(exc):
                permit.dropped()
            permit.release()
        if self.breaker is not None:
            self.breaker.record(now, ok=not retryable)
        if self.throttle is not None:
            self.throttle.record(now, accepted=not retryable)

    async def _after_failure(
        self,
        exc: Exception,
        reservation: Reservation | None,
        permit: Permit | None,
        call: _Call,
    ) -> None:
        """Account for a failed attempt, then back off for a retry or re-raise."""
        self._note_failure(exc, permit)
        status = getattr(exc, "status", None)
        retry_after = getattr(exc, "retry_after", None)
        if self.rate is not None:
            if reservation is not None and status is not None:
                # the provider answered with an error: it did not charge the call
                await self.rate.settle(reservation, 0.0)
            headers = getattr(exc, "headers", None)
            if headers:
                await self.rate.observe(parse_rate_headers(headers), 0.0)
            if status == 429 and isinstance(retry_after, int | float) and retry_after > 0:
                await self.rate.block_for(float(retry_after))
        if call.retrying:
            await self.budget.retry_finished()
            call.retrying = False
        d = current_deadline()
        action = next_action(
            self.policy,
            attempts=call.attempts,
            error=exc,
            now=self.clock.now(),
            deadline=None if d is None else d.at,
            rng=self.rng,
        )
        if not isinstance(action, GiveUp) and not await self.budget.try_retry():
            action = GiveUp("budget")
        if isinstance(action, GiveUp):
            if action.reason == "deadline":
                raise DeadlineExceeded(
                    f"no retry of {self.name!r} fits before the deadline after: {exc}"
                ) from exc
            raise exc
        call.retrying = True
        await self.clock.sleep(action.delay_s)

    async def _after_success(
        self,
        request: ChatRequest,
        result: ChatResult,
        reservation: Reservation | None,
        permit: Permit | None,
        call: _Call,
    ) -> None:
        now = self.clock.now()
        if permit is not None:
            permit.succeeded(work=1.0 + result.usage.output_tokens)
            permit.release()
        if self.breaker is not None:
            self.breaker.record(now, ok=True)
        if self.throttle is not None:
            self.throttle.record(now, accepted=True)
        if self.rate is not None:
            if reservation is not None:
                out = (
                    result.usage.output_tokens if self.refund_unused_output else request.max_tokens
                )
                await self.rate.settle(reservation, result.usage.input_tokens + out)
            if result.headers:
                age = result.timing.wall_s - result.timing.queue_wait_s
                await self.rate.observe(parse_rate_headers(result.headers), age)

    def _estimate(self, request: ChatRequest) -> float:
        return float(
            self.counter.count_messages(m.content for m in request.messages) + request.max_tokens
        )

    async def _end(
        self,
        request: ChatRequest,
        call: _Call,
        result: ChatResult | None,
        error: BaseException | None,
        *,
        streamed: bool,
    ) -> None:
        if call.retrying:
            await self.budget.retry_finished()
        await self.budget.call_finished()
        rec = self._recorder_now()
        if rec is None:
            return
        now = self.clock.now()
        outcome: Outcome = "ok"
        err_text: str | None = None
        if error is not None:
            cancelled = isinstance(error, asyncio.CancelledError | GeneratorExit)
            outcome = "cancelled" if cancelled else "error"
            err_text = None if cancelled else f"{type(error).__name__}: {error}"
        last = call.scratch[-1] if call.scratch else None
        rec.add(
            CallRecord(
                stage=request.stage or current_stage(),
                kind="model",
                name=result.model if result is not None else (last.name if last else self.model),
                started_at=rec.relative(call.start),
                wall_s=now - call.start,
                queue_wait_s=call.queue_wait,
                ttft_s=result.timing.ttft_s if result is not None else None,
                input_tokens=result.usage.input_tokens if result is not None else 0,
                output_tokens=result.usage.output_tokens if result is not None else 0,
                cached_tokens=result.usage.cached_tokens if result is not None else 0,
                tokens_per_s=result.timing.decode_tps if result is not None else None,
                attempts=call.attempts,
                outcome=outcome,
                error=err_text,
                streamed=streamed,
            )
        )
