"""The book-keeping of one resilient call and its attempts, as plain data.

:class:`~agentrt.flow.RetryingModel` keeps a :class:`CallState` per logical
call and folds its attempts into one
:class:`~agentrt.metrics._record.CallRecord` with :func:`call_record`; the
layers under it share one :class:`Attempt` per attempt (see
:mod:`agentrt.flow._layer`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, field

from agentrt._errors import ProviderError
from agentrt.llm._types import ChatRequest, ChatResult, StreamEvent
from agentrt.metrics._record import CallRecord, Outcome
from agentrt.metrics._recorder import MetricsRecorder, current_stage

__all__ = [
    "Attempt",
    "CallState",
    "aclose_events",
    "call_record",
    "is_drop",
    "is_pacing",
    "settle",
]


def is_drop(exc: BaseException) -> bool:
    """Refusals and timeouts: the congestion signals of the concurrency limit."""
    if isinstance(exc, ProviderError):
        return exc.status in (429, 529) or exc.code == "timeout"
    return False


def is_pacing(exc: BaseException) -> bool:
    """A 429 that says when to come back: the provider pacing us, not failing."""
    if not isinstance(exc, ProviderError) or exc.status != 429 or not exc.retryable:
        return False
    return isinstance(exc.retry_after, int | float) and exc.retry_after > 0


async def settle(step: Awaitable[None]) -> None:
    """Run a release step to its end even if this task is cancelled meanwhile.

    Used in ``finally`` blocks: a second cancellation arriving while a
    shared (Redis) counter is being given back must not leave it taken.
    """
    fut = asyncio.ensure_future(step)
    await asyncio.shield(fut)


async def aclose_events(events: AsyncIterator[StreamEvent]) -> None:
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        await aclose()


@dataclass(slots=True)
class Attempt:
    """What the flow layers of one attempt learn about it, top to bottom.

    ``sent``: the request left the flow layers for the model under them
    (the provider may have charged it); an admission that failed or was
    cancelled leaves it unsent. ``queue_wait``: seconds the layers spent
    admitting it (rate buckets, permits).
    """

    sent: bool = False
    queue_wait: float = 0.0


@dataclass(slots=True)
class CallState:
    """Book-keeping of one logical call across its attempts."""

    start: float
    attempts: int = 0  # requests sent
    failures: int = 0  # attempts that failed (pacing 429s excluded)
    paced: int = 0
    busy_waits: int = 0
    queue_wait: float = 0.0
    retrying: bool = False  # holds one of the budget's retries in flight
    scratch: list[CallRecord] = field(default_factory=list)


def call_record(
    rec: MetricsRecorder,
    request: ChatRequest,
    call: CallState,
    result: ChatResult | None,
    error: BaseException | None,
    *,
    now: float,
    model: str,
    streamed: bool,
) -> CallRecord:
    """ONE record for a logical call, whatever its attempts were."""
    outcome: Outcome = "ok"
    err_text: str | None = None
    if error is not None:
        cancelled = isinstance(error, asyncio.CancelledError | GeneratorExit)
        outcome = "cancelled" if cancelled else "error"
        err_text = None if cancelled else f"{type(error).__name__}: {error}"
    last = call.scratch[-1] if call.scratch else None
    return CallRecord(
        stage=request.stage or current_stage(),
        kind="model",
        name=result.model if result is not None else (last.name if last else model),
        started_at=rec.relative(call.start),
        wall_s=now - call.start,
        queue_wait_s=call.queue_wait,
        ttft_s=result.timing.ttft_s if result is not None else None,
        input_tokens=result.usage.input_tokens if result is not None else 0,
        output_tokens=result.usage.output_tokens if result is not None else 0,
        cached_tokens=result.usage.cached_tokens if result is not None else 0,
        decode_tps=result.timing.decode_tps if result is not None else None,
        output_tps=result.timing.output_tps if result is not None else None,
        attempts=call.attempts,
        outcome=outcome,
        error=err_text,
        streamed=streamed,
    )
