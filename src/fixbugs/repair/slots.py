"""Process slots for validation, handed to the best-ranked waiter first.

Parallel validation speculates: while the best-ranked candidate still runs,
candidates ranked after it use the other cores. Once that candidate is the
likely answer (it passed its failing tests and runs the long suite stage),
every free core should go to it, split into shards, rather than to a
speculative run whose result the ordered early stop would throw away. So
each test process holds a slot, and a freed slot goes to the waiter with
the lowest priority number (its candidate's rank), not to the oldest one.

A cancelled waiter leaves no permit behind: one granted just as it was
cancelled is passed on at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
from collections.abc import AsyncIterator

__all__ = ["PrioritySlots"]


class PrioritySlots:
    """``n`` slots; ``async with slots.hold(priority)``, lower numbers served first."""

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError("at least one slot")
        self.n = n
        self._free = n
        self._order = itertools.count()  # FIFO among equal priorities
        self._waiters: list[tuple[float, int, asyncio.Future[None]]] = []

    @property
    def free(self) -> int:
        return self._free

    @property
    def waiting(self) -> int:
        return sum(1 for _p, _o, f in self._waiters if not f.done())

    @contextlib.asynccontextmanager
    async def hold(self, priority: float) -> AsyncIterator[None]:
        if self._free > 0:  # invariant: a free slot means nobody waits (see _release)
            self._free -= 1
        else:
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            heapq.heappush(self._waiters, (priority, next(self._order), fut))
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self._release()  # granted as it was cancelled: pass the slot on
                raise
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        while self._waiters:
            _p, _o, fut = heapq.heappop(self._waiters)
            if not fut.done():  # invariant: a slot handed over is never counted free
                fut.set_result(None)
                return
        self._free += 1
