"""Deadlines for graph runs and scatters, on the runtime's one deadline mechanism.

A graph's or a node's deadline is a :func:`agentrt.flow._deadline.fail_after`
scope: it cancels the work when it passes, and, being carried in a context
variable, it also bounds every retry and wait beneath it (no attempt starts
after the caller's deadline). There is one :class:`DeadlineExceeded` for the
whole runtime.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TypeVar

from agentrt._clock import Clock
from agentrt.flow._deadline import DeadlineExceeded, fail_after

__all__ = ["DeadlineExceeded", "first_error", "with_deadline"]

T = TypeVar("T")


def first_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first leaf exception of a (possibly nested) exception group."""
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


async def with_deadline(
    clock: Clock, seconds: float, coro: Coroutine[object, object, T], *, what: str = "work"
) -> T:
    """Run ``coro``; cancel it and raise :class:`DeadlineExceeded` after ``seconds``.

    Cancelling ``coro`` reaches whatever it awaits (a model call in flight is
    cancelled and recorded as such).
    """
    try:
        async with fail_after(seconds, clock):
            return await coro
    except DeadlineExceeded:
        raise DeadlineExceeded(f"{what} ran past its deadline of {seconds:g} s") from None
