"""ConcurrencyLimitedModel: the one concurrency layer, holding calls to an endpoint.

The backend client does not limit itself: it declares how many calls its
endpoint serves at once (``max_concurrency``) and this layer holds them,
with a :class:`~agentrt.flow.ConcurrencyLimiter` (static, or adaptive so
that refusals and timeouts lower the limit). The wait for a permit is the
attempt's queue wait.
"""

from __future__ import annotations

from agentrt._clock import Clock
from agentrt.flow._adaptive import StaticLimit
from agentrt.flow._attempt import Attempt, is_drop
from agentrt.flow._layer import FlowLayer
from agentrt.flow._limiter import ConcurrencyLimiter, Permit
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult
from agentrt.llm._wrapper import max_concurrency

__all__ = ["ConcurrencyLimitedModel"]


class ConcurrencyLimitedModel(FlowLayer[Permit]):
    """At most ``limiter.limit`` calls to ``inner`` at once, in arrival order.

    Without a ``limiter``, a static one at the backend's declared
    ``max_concurrency`` (it is an error when the backend declares none).
    """

    def __init__(
        self,
        inner: ChatModel,
        limiter: ConcurrencyLimiter | None = None,
        *,
        name: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(inner, name=name, clock=clock)
        if limiter is None:
            declared = max_concurrency(inner)
            if not declared:
                raise ValueError(f"{self.name!r} declares no max_concurrency: give a limiter")
            limiter = ConcurrencyLimiter(StaticLimit(declared), clock=self.clock)
        self.limiter = limiter

    async def _admit(self, request: ChatRequest) -> Permit:
        return await self.limiter.acquire()

    async def _succeeded(self, held: Permit, request: ChatRequest, result: ChatResult) -> None:
        held.succeeded(work=1.0 + result.usage.output_tokens)

    async def _failed(self, held: Permit, exc: Exception) -> None:
        if is_drop(exc):
            held.dropped()  # a 429 slows the adaptive limit too

    async def _release(self, held: Permit, attempt: Attempt) -> None:
        held.release()  # idempotent
