"""Deadlines on an injected clock.

``asyncio.timeout`` reads the event loop's clock, which a
:class:`~agentrt.clock.FakeClock` does not move; a watchdog task sleeping on
the injected clock does, so deadlines behave the same in tests and in runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from agentrt.clock import Clock
from agentrt.errors import AgentrtError

__all__ = ["DeadlineExceeded", "first_error", "with_deadline"]

T = TypeVar("T")


class DeadlineExceeded(AgentrtError, TimeoutError):
    """Work ran past its deadline and was cancelled."""


def first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first leaf exception of a (possibly nested) exception group."""
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


async def with_deadline(
    clock: Clock, seconds: float, coro: Coroutine[Any, Any, T], *, what: str = "work"
) -> T:
    """Run ``coro``; cancel it and raise :class:`DeadlineExceeded` after ``seconds``.

    Cancelling ``coro`` reaches whatever it awaits (a model call in flight is
    cancelled and recorded as such).
    """
    fired = False

    async def watchdog() -> None:
        nonlocal fired
        await clock.sleep(seconds)
        fired = True
        work.cancel()

    try:
        async with asyncio.TaskGroup() as tg:
            work = tg.create_task(coro)
            dog = tg.create_task(watchdog())
            work.add_done_callback(lambda _: dog.cancel())
    except BaseExceptionGroup as eg:
        raise first_error(eg) from None
    if fired and work.cancelled():
        raise DeadlineExceeded(f"{what} ran past its deadline of {seconds:g} s")
    return work.result()
