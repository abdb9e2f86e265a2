"""SpendingModel: the run's spend budget in front of one endpoint's client.

The outermost layer of a configured client (over
:class:`~agentrt.flow.RetryingModel`): before a logical call it asks the
run's :class:`~agentrt.flow.SpendBudget` (the one active in this context,
if any) and raises :class:`~agentrt.BudgetExhausted` without sending
anything when it is spent; when the call returns it charges the call's
usage at the endpoint's price, under the call's stage. Outside the retry
layer on purpose: a refused call is no failed attempt (nothing to retry,
no failure in the metrics), and a call is charged once, for the answer it
returned.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from agentrt._clock import Clock
from agentrt.flow._attempt import aclose_events
from agentrt.flow._spend import Price, current_spend
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult, Completed, StreamEvent
from agentrt.llm._wrapper import WrapperModel
from agentrt.metrics._recorder import current_stage

__all__ = ["SpendingModel"]


class SpendingModel(WrapperModel):
    """Calls to ``inner`` admitted by, and charged to, the active spend budget.

    ``price`` is the endpoint's (``None``: unpriced, the budget counts its
    tokens only). Without an active budget every call passes uncounted.
    """

    def __init__(
        self,
        inner: ChatModel,
        *,
        price: Price | None = None,
        name: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(inner, name=name, clock=clock)
        self.price = price

    async def complete(self, request: ChatRequest) -> ChatResult:
        budget = current_spend()
        if budget is not None:
            budget.admit()
        result = await self.inner.complete(request)
        if budget is not None:
            budget.charge(request.stage or current_stage(), result.usage, self.price)
        return result

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        budget = current_spend()
        if budget is not None:
            budget.admit()
        events = self.inner.stream(request)
        try:
            async for ev in events:
                if isinstance(ev, Completed) and budget is not None:
                    # charged before the caller sees the end: one that stops there is counted
                    budget.charge(request.stage or current_stage(), ev.result.usage, self.price)
                yield ev
        finally:
            # close the inner stream now (its call's permits), not when it is collected
            await aclose_events(events)
