"""The base of the flow layers: one admission around each attempt, over any chat model.

The circuit breaker, the adaptive throttle, the rate limit and the
concurrency limit are each a :class:`FlowLayer`, a
:class:`~agentrt.llm.WrapperModel` that admits an attempt (it may wait, or
refuse), passes it down, hears how it went and gives back what it took, on
every way out: success, failure, ``CancelledError`` (a caller's deadline,
a cancelled task) and ``GeneratorExit`` (a ``break`` out of ``stream``).
:class:`~agentrt.flow.RetryingModel` sits on top and repeats attempts.

The layers of one stack share one :class:`~agentrt.flow._attempt.Attempt`,
passed down explicitly (:func:`forward`): it says whether the request left
the stack (an admission cut short must give its rate reservation back;
only an attempt that was sent is an outcome for the breaker, the throttle,
the limit and the retry budget) and how long admission waited. The flow
layers of a stack sit together, above any other wrapper.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from typing import Generic, TypeVar

from agentrt._errors import ProviderError
from agentrt.flow._attempt import Attempt, aclose_events
from agentrt.flow._deadline import DeadlineExceeded, current_deadline
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult, Completed, StreamEvent
from agentrt.llm._wrapper import WrapperModel

__all__ = ["FlowLayer", "check_deadline", "forward", "forward_stream"]

H = TypeVar("H")


def check_deadline(name: str, wait: float = 0.0) -> None:
    """Raise :class:`DeadlineExceeded` unless more than ``wait`` seconds are left."""
    d = current_deadline()
    if d is not None and d.remaining() <= wait:
        what = "the next attempt" if wait <= 0 else f"a {wait:.2f} s wait"
        raise DeadlineExceeded(f"deadline reached before {what} for {name!r}")


async def forward(model: ChatModel, request: ChatRequest, attempt: Attempt) -> ChatResult:
    """Send ``attempt`` down: through ``model`` if it is a flow layer, else out."""
    if isinstance(model, FlowLayer):
        return await model.send(request, attempt)
    attempt.sent = True
    return await model.complete(request)


def forward_stream(
    model: ChatModel, request: ChatRequest, attempt: Attempt
) -> AsyncIterator[StreamEvent]:
    """:func:`forward` for a streaming attempt."""
    if isinstance(model, FlowLayer):
        return model.send_stream(request, attempt)
    attempt.sent = True
    return model.stream(request)


class FlowLayer(WrapperModel, Generic[H], abc.ABC):
    """A layer that admits each attempt and holds an ``H`` while it runs.

    Subclasses say what admission takes (:meth:`_admit`, which either
    returns what it holds or raises holding nothing), what an outcome
    changes (:meth:`_succeeded`, :meth:`_failed`, called only for an
    attempt that was sent, before anything is given back) and how to give
    it back (:meth:`_release`, once, on every way out).
    """

    async def complete(self, request: ChatRequest) -> ChatResult:
        return await self.send(request, Attempt())

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        return self.send_stream(request, Attempt())

    async def send(self, request: ChatRequest, attempt: Attempt) -> ChatResult:
        """One attempt through this layer and the ones under it."""
        began = self.clock.now()
        held = await self._admit(request)
        try:
            attempt.queue_wait += self.clock.now() - began
            # waits are over: the attempt must still start before the deadline
            check_deadline(self.name)
            try:
                result = await forward(self.inner, request, attempt)
            except Exception as exc:
                if attempt.sent:
                    await self._failed(held, exc)
                raise
            await self._succeeded(held, request, result)
            return result
        finally:
            await self._release(held, attempt)

    async def send_stream(
        self, request: ChatRequest, attempt: Attempt
    ) -> AsyncIterator[StreamEvent]:
        """:meth:`send`, streaming; ``Completed`` comes last, once all is given back.

        A caller that stops at ``Completed`` and never resumes the stream
        still leaves nothing held.
        """
        began = self.clock.now()
        held = await self._admit(request)
        result: ChatResult | None = None
        try:
            attempt.queue_wait += self.clock.now() - began
            check_deadline(self.name)
            events = forward_stream(self.inner, request, attempt)
            try:
                try:
                    async for ev in events:
                        if isinstance(ev, Completed):
                            result = ev.result
                            continue
                        yield ev
                finally:
                    # close the inner stream now, not when it is collected
                    await aclose_events(events)
                if result is None:
                    raise ProviderError(f"stream from {self.name!r} ended without a result")
            except Exception as exc:
                if attempt.sent:
                    await self._failed(held, exc)
                raise
            await self._succeeded(held, request, result)
        finally:
            await self._release(held, attempt)
        yield Completed(result)

    @abc.abstractmethod
    async def _admit(self, request: ChatRequest) -> H:
        """Wait for what an attempt needs here, or refuse it."""

    async def _succeeded(self, held: H, request: ChatRequest, result: ChatResult) -> None:
        """A sent attempt answered."""

    async def _failed(self, held: H, exc: Exception) -> None:
        """A sent attempt failed with ``exc`` (which goes on up)."""

    async def _release(self, held: H, attempt: Attempt) -> None:
        """Give back what admission took; ``attempt.sent`` says if the request went out."""
