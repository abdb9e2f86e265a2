"""A cancellation checkpoint for loops whose awaits may lose a cancellation.

Python 3.11's :func:`asyncio.wait_for` returns the awaited result, instead
of raising, when its task is cancelled in the same loop iteration as the
awaited operation finishes (its 3.11 source: ``except CancelledError: if
fut.done(): return fut.result()``; 3.12 reimplemented it on
:func:`asyncio.timeout`). redis-py sends every command through
``wait_for`` when a socket timeout is set, and its default is 5 s, so under
load a worker loop polling Redis now and then swallows the cancellation
its task group sent it, and then polls forever: its task group, and every
``run`` above it, never ends. Seen in the staged SIGKILL test and the Redis
restart test, both of which hung that way.

The cancel request still counts in :meth:`asyncio.Task.cancelling`, so a
loop reads :func:`cancel_requests` when it starts and calls
:func:`checkpoint` with that reading after each such await: a request that
arrived meanwhile and was lost is raised there. A reading, not zero,
because 3.11's :class:`asyncio.TaskGroup` leaves one request counted on
its parent task when a child's error aborted it (seen on 3.11.7), so a
task that handled such an error carries a stale request that nobody means.
"""

from __future__ import annotations

import asyncio

__all__ = ["cancel_requests", "checkpoint"]


def cancel_requests() -> int:
    """This task's cancel requests not yet taken back (0 outside a task)."""
    task = asyncio.current_task()
    return task.cancelling() if task is not None else 0


def checkpoint(since: int) -> None:
    """Raise :class:`asyncio.CancelledError` for a cancel request newer than ``since``.

    ``since`` is the :func:`cancel_requests` reading taken before the awaits
    that may lose one; call it where the task is not handling a
    cancellation on purpose (not in cleanup that must run on).
    """
    if cancel_requests() > since:
        raise asyncio.CancelledError("a cancellation lost by an await below was raised again")
