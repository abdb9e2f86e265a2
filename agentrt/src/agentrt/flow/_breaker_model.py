"""BreakerModel: a circuit breaker in front of an endpoint.

Refuses attempts (:class:`~agentrt.flow.CircuitOpen`, so a fallback
endpoint takes the call) while the :class:`~agentrt.flow.CircuitBreaker`
is open, and tells it the outcome of every attempt that was sent. A
half-open probe that ends without an outcome (cancelled, paced) gives its
slot back.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentrt._clock import Clock
from agentrt.flow._attempt import Attempt, is_pacing
from agentrt.flow._breaker import CircuitBreaker, CircuitOpen
from agentrt.flow._layer import FlowLayer
from agentrt.flow._retry import is_retryable
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult

__all__ = ["BreakerModel"]


@dataclass(slots=True)
class _Probe:
    """The half-open period an attempt probes (``None``: not a probe)."""

    episode: int | None
    judged: bool = False  # the breaker heard this attempt's outcome


class BreakerModel(FlowLayer[_Probe]):
    """Attempts to ``inner`` only while ``breaker`` allows them."""

    def __init__(
        self,
        inner: ChatModel,
        breaker: CircuitBreaker,
        *,
        name: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(inner, name=name, clock=clock)
        self.breaker = breaker

    async def _admit(self, request: ChatRequest) -> _Probe:
        now = self.clock.now()
        if not self.breaker.allow(now):
            raise CircuitOpen(self.name, self.breaker.retry_in(now))
        return _Probe(self.breaker.episode if self.breaker.state == "half_open" else None)

    async def _succeeded(self, held: _Probe, request: ChatRequest, result: ChatResult) -> None:
        self.breaker.record(self.clock.now(), ok=True)
        held.judged = True

    async def _failed(self, held: _Probe, exc: Exception) -> None:
        if not is_pacing(exc):
            self.breaker.record(self.clock.now(), ok=not is_retryable(exc))
            held.judged = True

    async def _release(self, held: _Probe, attempt: Attempt) -> None:
        if held.episode is not None and not held.judged:
            # a probe that ended without an outcome must not hold the half-open slot
            self.breaker.cancel_probe(held.episode)
            held.judged = True
