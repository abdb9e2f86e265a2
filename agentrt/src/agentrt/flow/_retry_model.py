"""RetryingModel: the one retrying layer, on top of a model's flow layers.

A :class:`~agentrt.llm.WrapperModel` in the manner of pydantic-ai's wrapper
models, usually over the other flow layers (breaker, throttle, rate limit,
concurrency limit; :func:`~agentrt.flow.client_for_role` stacks them) and
the backend. Each logical call gets the caller's deadline (combined with
``deadline_s``, if set), then attempts: an attempt the layers under it
refused (breaker open, throttled, a limit that cannot be met) fails the
call at once; one that was sent and failed goes through
:func:`~agentrt.flow._retry.next_action` and the retry budget, with
full-jitter backoff. A 429 with ``Retry-After`` is pacing, not failure: the
call waits as asked and sends again without spending from the budget.
Every wait sleeps on the injected clock and never past the deadline. The
call's share of the retry budget is given back on every way out, including
``CancelledError`` and ``GeneratorExit``.

Metrics: the backend records one :class:`CallRecord` per attempt; those are
captured in a private recorder and folded into ONE record per logical
call, whose ``attempts`` is the number of requests sent and whose
``queue_wait_s`` is the time the layers spent admitting its attempts.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import AsyncIterator, Iterator

from agentrt._checkpoint import cancel_requests, checkpoint
from agentrt._clock import Clock
from agentrt._errors import ProviderError
from agentrt.flow._attempt import (
    Attempt,
    CallState,
    aclose_events,
    call_record,
    is_pacing,
    settle,
)
from agentrt.flow._deadline import DeadlineExceeded, current_deadline, fail_after
from agentrt.flow._gate import LocalRetryBudget, SharedBudget
from agentrt.flow._layer import check_deadline, forward, forward_stream
from agentrt.flow._retry import GiveUp, RetryPolicy, is_retryable, next_action
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult, Completed, StreamEvent
from agentrt.llm._wrapper import WrapperModel
from agentrt.metrics._recorder import MetricsRecorder, current_recorder

__all__ = ["RetryingModel"]


class RetryingModel(WrapperModel):
    """Retries, deadlines and one metrics record per call around ``inner``.

    ``budget`` is the retry budget this model shares with the others given
    the same one; without one, the model has its own (see
    :func:`agentrt.flow.retry_budget` for one built from configuration).
    ``rng`` draws the backoff jitter.
    """

    def __init__(
        self,
        inner: ChatModel,
        *,
        budget: SharedBudget | None = None,
        policy: RetryPolicy | None = None,
        deadline_s: float | None = None,
        rng: random.Random | None = None,
        name: str | None = None,
        clock: Clock | None = None,
        recorder: MetricsRecorder | None = None,
    ) -> None:
        super().__init__(inner, name=name, clock=clock)
        self.budget: SharedBudget = budget if budget is not None else LocalRetryBudget()
        self.policy = policy or RetryPolicy()
        self.deadline_s = deadline_s
        self.rng = rng or random.Random()
        self._recorder = recorder

    async def complete(self, request: ChatRequest) -> ChatResult:
        call = CallState(start=self.clock.now())
        result: ChatResult | None = None
        error: BaseException | None = None
        await self.budget.call_started()
        try:
            async with self._overall_deadline():
                while True:
                    check_deadline(self.name)
                    attempt = Attempt()
                    try:
                        with self._capture(call, attempt):
                            result = await forward(self.inner, request, attempt)
                    except Exception as exc:
                        await self._after_failure(exc, call, attempt, yielded=False)
                    else:
                        await self.budget.record(ok=True)
                        return result
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
        await self.budget.call_started()
        try:
            async with self._overall_deadline():
                while result is None:
                    check_deadline(self.name)
                    attempt = Attempt()
                    yielded = False
                    try:
                        with self._capture(call, attempt):
                            events = forward_stream(self.inner, request, attempt)
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
                            raise ProviderError(f"stream from {self.name!r} ended without a result")
                    except Exception as exc:
                        # text already reached the caller: a retry would repeat it
                        await self._after_failure(exc, call, attempt, yielded=yielded)
                    else:
                        await self.budget.record(ok=True)
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
    @contextlib.asynccontextmanager
    async def _overall_deadline(self) -> AsyncIterator[None]:
        if self.deadline_s is None:
            yield
            return
        async with fail_after(self.deadline_s, self.clock):
            yield

    @contextlib.contextmanager
    def _capture(self, call: CallState, attempt: Attempt) -> Iterator[None]:
        """Run one attempt with its records captured, then fold it into ``call``."""
        scratch = MetricsRecorder(self.clock)
        try:
            with scratch.activate():
                yield
        finally:
            call.scratch.extend(scratch.records)
            call.queue_wait += attempt.queue_wait
            if attempt.sent:
                call.attempts += 1

    async def _after_failure(
        self, exc: Exception, call: CallState, attempt: Attempt, *, yielded: bool
    ) -> None:
        """Account for a failed attempt the layers gave back; re-raise, or wait for the next."""
        if not attempt.sent:
            raise exc  # refused before it was sent: no retry
        if not is_pacing(exc):
            retryable = is_retryable(exc)
            if getattr(exc, "status", None) is not None or retryable:
                await self.budget.record(ok=not retryable)
        if yielded:
            raise exc
        await self._next_attempt(exc, call)

    async def _next_attempt(self, exc: Exception, call: CallState) -> None:
        """After a failed attempt: wait for the next, or re-raise."""
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
            check_deadline(self.name, delay)
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

    async def _end(
        self,
        request: ChatRequest,
        call: CallState,
        result: ChatResult | None,
        error: BaseException | None,
        *,
        streamed: bool,
    ) -> None:
        if call.retrying:
            call.retrying = False
            await settle(self.budget.retry_finished())
        await settle(self.budget.call_finished())
        rec = self._recorder or current_recorder()
        if rec is not None:
            rec.add(
                call_record(
                    rec,
                    request,
                    call,
                    result,
                    error,
                    now=self.clock.now(),
                    model=self.model,
                    streamed=streamed,
                )
            )
