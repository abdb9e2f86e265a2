"""Time as an injected dependency.

Every component that waits or measures takes a :class:`Clock`, so tests run
on a :class:`FakeClock` (modelled on trio's ``MockClock``) and never sleep on
the wall clock, and the simulator can run a 600 s scenario in seconds on a
:class:`ScaledClock`.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "FakeClock", "ScaledClock", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """What the runtime needs from time: a monotonic reading and a sleep."""

    def now(self) -> float:
        """Monotonic seconds; only differences are meaningful."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Suspend the calling task for ``seconds`` of this clock's time."""
        ...


class SystemClock:
    """The real monotonic clock."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class ScaledClock:
    """Clock whose time runs ``scale`` times faster than the wall clock.

    ``now()`` reports scaled seconds and ``sleep(d)`` waits ``d / scale`` real
    seconds, so a component written in model time (a 600 s decode) finishes in
    600 / scale real seconds while reporting 600 s.
    """

    def __init__(self, scale: float = 1.0) -> None:
        if scale <= 0:
            raise ValueError("time scale must be positive")
        self.scale = scale
        self._origin = time.monotonic()

    def now(self) -> float:
        return (time.monotonic() - self._origin) * self.scale

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds) / self.scale)


class FakeClock:
    """A clock that moves only when told to, for deterministic tests.

    ``advance(dt)`` moves time and wakes every sleeper whose deadline passed.
    With ``autojump=True`` (use :meth:`autojumping` inside a running loop) the
    clock jumps straight to the next deadline whenever every task of the loop
    is blocked, as trio's ``MockClock(autojump_threshold=0)`` does: a test of a
    ten-minute scenario runs instantly and still sees exact timings.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        # heap of (deadline, seq, future); invariant: every future is pending
        # or cancelled, and a cancelled one is skipped when popped.
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._seq), fut))
        await fut

    def advance(self, seconds: float) -> None:
        """Move time forward and wake the sleepers that are due."""
        if seconds < 0:
            raise ValueError("time cannot go backwards")
        self._wake_until(self._now + seconds)

    def next_deadline(self) -> float | None:
        self._drop_cancelled()
        return self._sleepers[0][0] if self._sleepers else None

    def _drop_cancelled(self) -> None:
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)

    def _wake_until(self, target: float) -> None:
        while True:
            self._drop_cancelled()
            if not self._sleepers or self._sleepers[0][0] > target:
                break
            deadline, _, fut = heapq.heappop(self._sleepers)
            self._now = max(self._now, deadline)
            fut.set_result(None)
        self._now = max(self._now, target)

    def autojumping(self) -> _AutoJump:
        """Async context manager that jumps time whenever the loop is idle."""
        return _AutoJump(self)


class _AutoJump:
    """Background task of :meth:`FakeClock.autojumping`.

    Idleness is detected by yielding to the loop several times in a row and
    seeing no other callback scheduled; only then does time jump to the next
    deadline. Everything in the loop must be in-process (no real I/O or
    threads), which is what the in-process simulator and fake model give.
    """

    _IDLE_ROUNDS = 5

    def __init__(self, clock: FakeClock) -> None:
        self._clock = clock
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> FakeClock:
        self._task = asyncio.create_task(self._run(), name="fakeclock-autojump")
        return self._clock

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        idle = 0
        while True:
            await asyncio.sleep(0)
            # the loop's ready queue holds callbacks other than ours
            ready = len(getattr(loop, "_ready", ()))
            if ready:
                idle = 0
                continue
            idle += 1
            if idle < self._IDLE_ROUNDS:
                continue
            idle = 0
            deadline = self._clock.next_deadline()
            if deadline is not None:
                self._clock._wake_until(deadline)
