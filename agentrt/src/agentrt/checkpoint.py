"""A cancellation checkpoint for loops whose awaits may lose a cancellation.

Python 3.11's :func:`asyncio.wait_for` returns the awaited result, instead
of raising, when its task is cancelled in the same loop iteration as the
awaited operation finishes (CPython gh-86296; 3.12 reimplemented it on
:func:`asyncio.timeout`). redis-py sends every command through
``wait_for`` when a socket timeout is set, and its default is 5 s, so under
load a worker loop polling Redis now and then swallows the cancellation
its task group sent it, and then polls forever: its task group, and every
``run`` above it, never ends. Seen in the staged SIGKILL test and the Redis
restart test, both of which hung that way.

The cancel request still counts in :meth:`asyncio.Task.cancelling`, so a
loop calls :func:`checkpoint` after each such await: a lost cancellation
is raised there, and structured concurrency holds again.
"""

from __future__ import annotations

import asyncio

__all__ = ["checkpoint"]


def checkpoint() -> None:
    """Raise :class:`asyncio.CancelledError` if this task's cancellation was swallowed.

    Call it only where the task is not handling a cancellation on purpose
    (not in an ``except CancelledError`` or cleanup that must run on): any
    request still outstanding there is one nobody acted on.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling() > 0:
        raise asyncio.CancelledError("a cancellation lost by an await below was raised again")
