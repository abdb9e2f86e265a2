"""Where the limits live: in this process, or shared (Redis) by many.

The drivers (:class:`~agentrt.flow.RateLimitedModel`,
:class:`~agentrt.flow.RetryingModel`) talk to rate buckets and the retry
budget through these two small async protocols, so the same drivers run
with in-process state (:class:`LocalRateGate`, :class:`LocalRetryBudget`)
or with state that N worker processes on many machines share
(:mod:`agentrt.flow._redis_store`). Times cross this boundary as
*durations* (seconds to wait, age of a header), never as instants,
because each process has its own clock origin.
"""

from __future__ import annotations

from typing import Protocol

from agentrt._clock import Clock
from agentrt.flow._ratelimit import HeaderView, RateBuckets, Reservation
from agentrt.flow._retry import RetryBudget, RetryVerdict

__all__ = ["LocalRateGate", "LocalRetryBudget", "RateGate", "SharedBudget", "with_headroom"]


class RateGate(Protocol):
    """Per-endpoint RPM/TPM buckets, wherever they are kept."""

    async def reserve(self, tokens: float) -> Reservation | float:
        """Take one request and ``tokens``, or return seconds until they would fit."""
        ...

    async def settle(self, reservation: Reservation, charged_tokens: float) -> None: ...

    async def cancel(self, reservation: Reservation) -> None:
        """Give back a reservation whose request was never sent."""
        ...

    async def observe(self, view: HeaderView, age_s: float) -> None:
        """The provider's remaining counts, as of ``age_s`` seconds ago."""
        ...

    async def block_for(self, seconds: float) -> None:
        """Reserve nothing for ``seconds`` (``Retry-After``)."""
        ...


class SharedBudget(Protocol):
    """The retry budget, wherever it is kept (see :class:`RetryBudget`)."""

    async def call_started(self) -> None: ...

    async def call_finished(self) -> None: ...

    async def record(self, *, ok: bool) -> None:
        """One attempt's outcome at the provider: the brownout signal."""
        ...

    async def ask_retry(self) -> RetryVerdict: ...

    async def retry_finished(self) -> None: ...


def with_headroom(limit: int | None, headroom: float) -> int | None:
    """The share of a provider limit a client plans to use.

    A call reserved here reaches the provider a little later; while it is
    in transit the provider's full bucket cannot refill but ours does, so
    a client that plans on 100% of the limit runs a few tokens ahead of
    the provider and meets an occasional 429. A few percent of headroom
    absorbs that lag.
    """
    if limit is None:
        return None
    return max(1, int(limit * (1.0 - headroom)))


class LocalRateGate:
    """:class:`RateBuckets` of this process, on ``clock``, at ``1 - headroom`` of the limits."""

    def __init__(
        self,
        rpm: int | None,
        tpm: int | None,
        *,
        clock: Clock,
        headroom: float = 0.03,
    ) -> None:
        self.clock = clock
        self.buckets = RateBuckets(
            with_headroom(rpm, headroom),
            with_headroom(tpm, headroom),
            now=clock.now(),
        )

    async def reserve(self, tokens: float) -> Reservation | float:
        return self.buckets.try_reserve(self.clock.now(), tokens)

    async def settle(self, reservation: Reservation, charged_tokens: float) -> None:
        self.buckets.settle(self.clock.now(), reservation, charged_tokens)

    async def cancel(self, reservation: Reservation) -> None:
        self.buckets.cancel(self.clock.now(), reservation)

    async def observe(self, view: HeaderView, age_s: float) -> None:
        now = self.clock.now()
        self.buckets.observe(now, view, as_of=now - age_s)

    async def block_for(self, seconds: float) -> None:
        self.buckets.block_until(self.clock.now() + seconds)


class LocalRetryBudget:
    """A :class:`RetryBudget` of this process behind the async protocol."""

    def __init__(self, budget: RetryBudget | None = None) -> None:
        self.budget = budget or RetryBudget()

    async def call_started(self) -> None:
        self.budget.call_started()

    async def call_finished(self) -> None:
        self.budget.call_finished()

    async def record(self, *, ok: bool) -> None:
        self.budget.record(ok=ok)

    async def ask_retry(self) -> RetryVerdict:
        return self.budget.ask_retry()

    async def try_retry(self) -> bool:
        return self.budget.try_retry()

    async def retry_finished(self) -> None:
        self.budget.retry_finished()
