"""ThrottlingModel: client-side adaptive throttling in front of an endpoint.

Rejects attempts locally (:class:`~agentrt.flow.Throttled`) with the
probability the :class:`~agentrt.flow.AdaptiveThrottle` gives while the
endpoint keeps failing, and tells it whether each attempt that was sent
was accepted. Pacing (a 429 with ``Retry-After``) is not a refusal.
"""

from __future__ import annotations

import random

from agentrt._clock import Clock
from agentrt.flow._attempt import is_pacing
from agentrt.flow._layer import FlowLayer
from agentrt.flow._retry import is_retryable
from agentrt.flow._throttle import AdaptiveThrottle, Throttled
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult

__all__ = ["ThrottlingModel"]


class ThrottlingModel(FlowLayer[None]):
    """Attempts to ``inner``, some rejected by ``throttle`` (drawn from ``rng``)."""

    def __init__(
        self,
        inner: ChatModel,
        throttle: AdaptiveThrottle,
        *,
        rng: random.Random | None = None,
        name: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(inner, name=name, clock=clock)
        self.throttle = throttle
        self.rng = rng or random.Random()

    async def _admit(self, request: ChatRequest) -> None:
        now = self.clock.now()
        if self.throttle.should_reject(now, self.rng):
            raise Throttled(self.name, self.throttle.reject_probability(now))

    async def _succeeded(self, held: None, request: ChatRequest, result: ChatResult) -> None:
        self.throttle.record(self.clock.now(), accepted=True)

    async def _failed(self, held: None, exc: Exception) -> None:
        if not is_pacing(exc):
            self.throttle.record(self.clock.now(), accepted=not is_retryable(exc))
