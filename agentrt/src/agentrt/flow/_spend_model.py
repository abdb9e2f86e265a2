"""SpendingModel: the run's spend budget in front of one endpoint's client.

The outermost layer of a configured client (over
:class:`~agentrt.flow.RetryingModel`): before a logical call it reserves
the call's worst case in the run's :class:`~agentrt.flow.SpendBudget` (the
one active in this context, if any: its input tokens, estimated with
:data:`~agentrt.flow.INPUT_MARGIN` to spare, plus ``max_tokens`` of output,
at the endpoint's price) and raises :class:`~agentrt.BudgetExhausted`
without sending anything when that does not fit; when the call returns it
charges the call's usage under the call's stage and frees the rest of what
it held (all of it when the call fails). Outside the retry
layer on purpose: a refused call is no failed attempt (nothing to retry,
no failure in the metrics), and a call is charged once, for the answer it
returned.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator

from agentrt._clock import Clock
from agentrt.flow._attempt import aclose_events
from agentrt.flow._spend import INPUT_MARGIN, Price, SpendBudget, SpendHold, current_spend
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult, Completed, StreamEvent, Usage
from agentrt.llm._wrapper import WrapperModel
from agentrt.metrics._recorder import current_stage
from agentrt.tokens._counting import EstimateCounter

__all__ = ["SpendingModel", "worst_case"]


def worst_case(request: ChatRequest) -> Usage:
    """The most ``request`` can use: its input tokens (messages and any JSON schema, the
    estimate raised by :data:`INPUT_MARGIN`) and all of its ``max_tokens`` of output."""
    texts = [m.content for m in request.messages]
    if request.json_schema is not None:
        texts.append(json.dumps(request.json_schema, separators=(",", ":")))
    estimate = EstimateCounter().count_messages(texts)
    return Usage(input_tokens=math.ceil(estimate * INPUT_MARGIN), output_tokens=request.max_tokens)


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

    def _reserve(self, request: ChatRequest) -> tuple[SpendBudget, SpendHold, str] | None:
        budget = current_spend()
        if budget is None:
            return None
        stage = request.stage or current_stage()
        return budget, budget.reserve(stage, worst_case(request), self.price), stage

    async def complete(self, request: ChatRequest) -> ChatResult:
        held = self._reserve(request)
        if held is None:
            return await self.inner.complete(request)
        budget, reservation, stage = held
        try:
            result = await self.inner.complete(request)
        except Exception:
            budget.release(reservation)  # an error answer: providers do not bill it
            raise
        # cancelled (a step's deadline): the request may have reached the provider and
        # be billed; its worst case stays held, so the budget still cannot be overrun
        budget.settle(reservation, stage, result.usage)
        return result

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        held = self._reserve(request)
        events = self.inner.stream(request)
        try:
            async for ev in events:
                if isinstance(ev, Completed) and held is not None:
                    # charged before the caller sees the end: one that stops there is counted
                    budget, reservation, stage = held
                    budget.settle(reservation, stage, ev.result.usage)
                    held = None
                yield ev
        except Exception:
            if held is not None:
                held[0].release(held[1])  # an error answer: not billed
            raise
        finally:
            # a stream given up before its end (cancelled, closed) keeps its worst case
            # held, as a cancelled complete() does; close the inner stream now
            await aclose_events(events)
