"""RateLimitedModel: requests and tokens per minute, reserved before each attempt.

An attempt reserves one request and its estimated tokens (prompt plus
``max_tokens``) from a :class:`~agentrt.flow.RateGate`, local or shared by
many processes, waiting (on the injected clock, never past the deadline)
until they fit. The reservation is then corrected by what happened: the
provider's usage on success, nothing when it answered with an error, given
back whole when the request was never sent, kept when it was sent and cut
off (the provider counted it). Rate headers cap the buckets at what the
provider says remains; a 429 with ``Retry-After`` blocks the gate.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentrt._checkpoint import cancel_requests, checkpoint
from agentrt._clock import Clock
from agentrt._errors import ProviderError
from agentrt.flow._attempt import Attempt, is_pacing, settle
from agentrt.flow._gate import RateGate
from agentrt.flow._layer import FlowLayer, check_deadline
from agentrt.flow._ratelimit import Reservation, parse_rate_headers
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult
from agentrt.tokens._counting import EstimateCounter, TokenCounter

__all__ = ["RateLimitedModel"]


@dataclass(slots=True)
class _Charge:
    """One attempt's reservation; ``settled`` once an outcome corrected it."""

    reservation: Reservation
    settled: bool = False


class RateLimitedModel(FlowLayer[_Charge]):
    """Attempts to ``inner`` within ``gate``'s RPM/TPM.

    ``refund_unused_output`` charges the output tokens a call used rather
    than its ``max_tokens`` (for providers that count what was generated).
    """

    def __init__(
        self,
        inner: ChatModel,
        gate: RateGate,
        *,
        counter: TokenCounter | None = None,
        refund_unused_output: bool = False,
        name: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        super().__init__(inner, name=name, clock=clock)
        self.gate = gate
        self.counter: TokenCounter = counter or EstimateCounter()
        self.refund_unused_output = refund_unused_output

    async def _admit(self, request: ChatRequest) -> _Charge:
        tokens = float(
            self.counter.count_messages(m.content for m in request.messages) + request.max_tokens
        )
        seen = cancel_requests()
        while True:
            got = await self.gate.reserve(tokens)
            if isinstance(got, Reservation):
                return _Charge(got)
            if got == float("inf"):
                raise ProviderError(
                    f"a call of {tokens:.0f} tokens can never fit {self.name!r}'s "
                    "tokens-per-minute limit; lower max_tokens or the prompt",
                    retryable=False,
                )
            check_deadline(self.name, got)
            checkpoint(seen)  # nothing held here; a store may have lost our cancel
            await self.clock.sleep(got)

    async def _succeeded(self, held: _Charge, request: ChatRequest, result: ChatResult) -> None:
        out = result.usage.output_tokens if self.refund_unused_output else request.max_tokens
        held.settled = True
        await self.gate.settle(held.reservation, result.usage.input_tokens + out)
        if result.headers:
            age = result.timing.wall_s - result.timing.queue_wait_s
            await self.gate.observe(parse_rate_headers(result.headers), age)

    async def _failed(self, held: _Charge, exc: Exception) -> None:
        if getattr(exc, "status", None) is not None:
            # the provider answered with an error: it did not charge the call
            held.settled = True
            await self.gate.settle(held.reservation, 0.0)
        headers = getattr(exc, "headers", None)
        if headers:
            await self.gate.observe(parse_rate_headers(headers), 0.0)
        if is_pacing(exc):
            await self.gate.block_for(float(getattr(exc, "retry_after", 0.0)))

    async def _release(self, held: _Charge, attempt: Attempt) -> None:
        if held.settled:
            return
        held.settled = True
        if not attempt.sent:
            await settle(self.gate.cancel(held.reservation))
        # sent and cut off: the provider counted the request, keep the charge
