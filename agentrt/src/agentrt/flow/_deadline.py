"""Deadlines that propagate: a caller's time limit bounds everything beneath it.

A deadline is an absolute instant on an injected :class:`~agentrt._clock.Clock`,
carried in a context variable, so a retry loop five layers down sees the
deadline of the request that started it without anyone passing it along
(the same idea as anyio's ``fail_after``/``move_on_after`` and gRPC deadline
propagation, but on the runtime's clock so tests run on a ``FakeClock``).

Nested scopes keep the earliest deadline: an inner scope can shorten the
time left, never extend it. Entering :func:`fail_after` also *enforces* the
deadline: when it passes, the body is cancelled and
:class:`DeadlineExceeded` is raised, so a call that is already in flight is
cut off rather than outliving its caller. Code that only needs to *respect*
a deadline (not start an attempt after it, not sleep past it) reads
:func:`current_deadline`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass

from agentrt._clock import Clock
from agentrt._errors import AgentrtError

__all__ = [
    "Deadline",
    "DeadlineExceeded",
    "current_deadline",
    "fail_after",
    "fail_at",
    "move_on_after",
    "time_left",
]


class DeadlineExceeded(AgentrtError, TimeoutError):
    """The caller's deadline passed; nothing more is attempted for it."""


@dataclass(frozen=True, slots=True)
class Deadline:
    """An instant on ``clock`` after which no work for the caller should start."""

    at: float
    clock: Clock

    def remaining(self) -> float:
        return self.at - self.clock.now()

    def expired(self) -> bool:
        return self.clock.now() >= self.at


_deadline: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar(
    "agentrt_deadline", default=None
)


def current_deadline() -> Deadline | None:
    """The earliest deadline of the enclosing scopes, or None."""
    return _deadline.get()


def time_left(default: float = math.inf) -> float:
    """Seconds until the current deadline (``default`` when there is none)."""
    d = _deadline.get()
    return default if d is None else d.remaining()


@contextlib.asynccontextmanager
async def fail_at(at: float, clock: Clock) -> AsyncIterator[Deadline]:
    """Run the body under a deadline at instant ``at``; raise DeadlineExceeded past it."""
    async with _scope(at, clock, raise_on_expiry=True) as d:
        yield d


@contextlib.asynccontextmanager
async def fail_after(seconds: float, clock: Clock) -> AsyncIterator[Deadline]:
    """Run the body for at most ``seconds`` of ``clock``; raise DeadlineExceeded past it."""
    async with _scope(clock.now() + seconds, clock, raise_on_expiry=True) as d:
        yield d


@contextlib.asynccontextmanager
async def move_on_after(seconds: float, clock: Clock) -> AsyncIterator[Deadline]:
    """Like :func:`fail_after`, but expiry just ends the body silently."""
    async with _scope(clock.now() + seconds, clock, raise_on_expiry=False) as d:
        yield d


@contextlib.asynccontextmanager
async def _scope(at: float, clock: Clock, *, raise_on_expiry: bool) -> AsyncIterator[Deadline]:
    outer = _deadline.get()
    mine = Deadline(at, clock)
    # invariant: the deadline in force is the earliest of the enclosing ones
    effective = mine if outer is None or outer.at > at else outer
    token = _deadline.set(effective)
    task = asyncio.current_task()
    assert task is not None, "deadline scopes need a running task"
    fired = False

    async def watch() -> None:
        nonlocal fired
        while True:
            left = mine.remaining()
            if left <= 0:
                break
            await clock.sleep(left)
        fired = True
        task.cancel()

    # The watcher belongs to this scope: it is cancelled and awaited on exit,
    # whatever way the body ends, so no task outlives the scope.
    watcher = asyncio.create_task(watch(), name="agentrt-deadline")
    try:
        yield effective
    except asyncio.CancelledError:
        if fired and task.uncancel() == 0:
            if raise_on_expiry:
                raise DeadlineExceeded(
                    f"deadline passed ({at - clock.now():+.3f} s); work for it was cancelled"
                ) from None
            return
        raise
    finally:
        _deadline.reset(token)
        watcher.cancel()
        try:
            await watcher
        except asyncio.CancelledError:
            # the watcher's own cancellation ends here; ours must not
            if task.cancelling():
                raise
    if fired:
        # the body swallowed our cancellation and finished: still account for it
        task.uncancel()
        if raise_on_expiry:
            raise DeadlineExceeded("deadline passed; the work for it was cancelled")
