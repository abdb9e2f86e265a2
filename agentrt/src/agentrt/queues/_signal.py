"""ChangeSignal: wake in-process waiters when a queue store changes.

Its own module so that the stores (memory, SQLite, Redis streams) and the
backend interface that picks among them do not import each other.
"""

from __future__ import annotations

import asyncio

from agentrt._clock import Clock

__all__ = ["ChangeSignal"]


class ChangeSignal:
    """Wakes in-process waiters when the store changes; other processes poll.

    Invariant: every waiter's future is resolved by the next :meth:`notify`
    or abandoned by its own timeout, never both left pending.
    """

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._waiters: list[asyncio.Future[None]] = []

    def notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for fut in waiters:
            if not fut.done():
                fut.set_result(None)

    async def wait(self, timeout_s: float) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        sleeper = asyncio.ensure_future(self._clock.sleep(timeout_s))
        try:
            await asyncio.wait({fut, sleeper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Not awaited: awaiting the cancelled sleeper here would swallow a
            # cancellation of *this* task that lands in that extra step, and a
            # worker loop whose cancel is swallowed never ends (a TaskGroup then
            # waits for it forever).
            sleeper.cancel()
            if not fut.done():
                fut.cancel()
