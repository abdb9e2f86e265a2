"""A clock in epoch seconds, for leases and records that outlive a process.

A durable store is read by other processes and after restarts, where a
monotonic reading means nothing; leases and timings stored there use wall
time. Tests inject a :class:`~agentrt._clock.FakeClock` instead.
"""

from __future__ import annotations

import asyncio
import time

__all__ = ["EpochClock"]


class EpochClock:
    """``now()`` in seconds since the epoch; ``sleep`` on the event loop."""

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))
