"""The async driver of a concurrency limit: permits, a FIFO queue, samples.

Callers wait in arrival order for a permit; the number handed out never
exceeds the algorithm's current limit (when the limit shrinks, permits
already out are not revoked: new ones wait until enough are returned).
Each permit reports how its call went, which is how an
:class:`~agentrt.flow._adaptive.AdaptiveLimit` learns. Waiting is cancellable,
so a deadline scope around the caller cuts a wait short; a caller that
gives up never leaks a permit.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import AsyncIterator

from agentrt._clock import Clock, SystemClock
from agentrt.flow._adaptive import LimitAlgorithm, Sample

__all__ = ["ConcurrencyLimiter", "Permit"]


class Permit:
    """One call's slot; tell it how the call went before releasing it."""

    __slots__ = ("_done", "_dropped", "_ignored", "_limiter", "_work", "in_flight", "started_at")

    def __init__(self, limiter: ConcurrencyLimiter, started_at: float, in_flight: int) -> None:
        self._limiter = limiter
        self.started_at = started_at
        self.in_flight = in_flight
        self._work = 1.0
        self._dropped = False
        self._ignored = True  # no outcome reported: the call failed for other reasons
        self._done = False

    def succeeded(self, work: float = 1.0) -> None:
        """The endpoint answered; ``work`` normalises the latency (1 + output tokens)."""
        self._ignored = False
        self._work = work

    def dropped(self) -> None:
        """The endpoint refused (429/529) or the call timed out."""
        self._ignored = False
        self._dropped = True

    def release(self) -> None:
        if self._done:
            return
        self._done = True
        self._limiter._release(self)


class ConcurrencyLimiter:
    """Hands out at most ``algorithm.limit`` permits at once."""

    def __init__(self, algorithm: LimitAlgorithm, *, clock: Clock | None = None) -> None:
        self.algorithm = algorithm
        self.clock: Clock = clock or SystemClock()
        self.in_use = 0
        self.peak_in_use = 0
        # invariant: a waiter future is done only once it was handed a permit
        # (result) or its caller gave up (cancelled)
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    @property
    def limit(self) -> int:
        return self.algorithm.limit

    @property
    def waiting(self) -> int:
        return sum(1 for w in self._waiters if not w.done())

    async def acquire(self) -> Permit:
        if self.in_use < self.limit and not self.waiting:
            return self._grant()
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                # handed a permit as we were cancelled: give it back
                self.in_use -= 1
                self._wake()
            raise
        return self._make_permit()

    @contextlib.asynccontextmanager
    async def permit(self) -> AsyncIterator[Permit]:
        """``async with limiter.permit() as p:`` — released however the body ends."""
        p = await self.acquire()
        try:
            yield p
        finally:
            p.release()

    def _grant(self) -> Permit:
        self.in_use += 1
        return self._make_permit()

    def _make_permit(self) -> Permit:
        self.peak_in_use = max(self.peak_in_use, self.in_use)
        return Permit(self, self.clock.now(), self.in_use)

    def _release(self, permit: Permit) -> None:
        self.in_use -= 1
        if not permit._ignored:
            now = self.clock.now()
            self.algorithm.on_sample(
                now,
                Sample(
                    started_at=permit.started_at,
                    latency_s=now - permit.started_at,
                    in_flight=permit.in_flight,
                    work=permit._work,
                    dropped=permit._dropped,
                ),
            )
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_use < self.limit:
            fut = self._waiters.popleft()
            if fut.done():
                continue
            self.in_use += 1  # taken on the waiter's behalf
            fut.set_result(None)
