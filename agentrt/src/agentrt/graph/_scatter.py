"""Scatter-gather: a bounded-concurrency map whose results stream back as they complete.

``limit`` worker tasks (in one task group) pull items from a shared
iterator, so at most ``limit`` calls are in flight and a new one starts the
moment one finishes: no waves, no task per item. Each result is pushed to
the caller as soon as its call returns. A failed call either becomes an
:class:`Outcome` carrying the error (``collect``) or cancels the rest and is
re-raised (``raise``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from agentrt.graph._channel import Channel
from agentrt.graph._deadline import first_error

__all__ = ["ErrorPolicy", "Outcome", "gather_map", "scatter"]

T = TypeVar("T")
R = TypeVar("R")

ErrorPolicy = Literal["raise", "collect"]


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T, R]):
    """The result of one call: ``value`` or ``error``, with the input's index."""

    index: int
    item: T
    value: R | None = None
    error: Exception | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def unwrap(self) -> R:
        if self.error is not None:
            raise self.error
        return self.value  # type: ignore[return-value]


@contextlib.asynccontextmanager
async def scatter(
    fn: Callable[[T], Awaitable[R]],
    items: Iterable[T],
    *,
    limit: int = 16,
    on_error: ErrorPolicy = "collect",
) -> AsyncIterator[AsyncIterator[Outcome[T, R]]]:
    """``async with scatter(fn, items) as results: async for o in results: ...``

    Results arrive in completion order. Leaving the block early cancels the
    calls still in flight.
    """
    if limit < 1:
        raise ValueError("limit must be at least 1")
    chan: Channel[Outcome[T, R]] = Channel()
    source = enumerate(items)
    workers = limit
    if isinstance(items, list | tuple | range):
        workers = max(1, min(limit, len(items)))
    live = workers

    async def worker() -> None:
        nonlocal live
        try:
            # invariant: each item is taken by exactly one worker (next() is synchronous)
            for i, item in source:
                try:
                    value = await fn(item)
                except Exception as exc:
                    if on_error == "raise":
                        raise
                    chan.push(Outcome(i, item, None, exc))
                else:
                    chan.push(Outcome(i, item, value))
        finally:
            live -= 1
            if live == 0:
                chan.close()

    try:
        async with asyncio.TaskGroup() as tg:
            tasks = [tg.create_task(worker()) for _ in range(workers)]
            try:
                yield chan
            finally:
                for t in tasks:
                    t.cancel()
    except BaseExceptionGroup as eg:
        raise first_error(eg) from None


async def gather_map(
    fn: Callable[[T], Awaitable[R]],
    items: Iterable[T],
    *,
    limit: int = 16,
    on_error: ErrorPolicy = "collect",
) -> list[Outcome[T, R]]:
    """All outcomes, in input order."""
    out: list[Outcome[T, R]] = []
    async with scatter(fn, items, limit=limit, on_error=on_error) as results:
        async for o in results:
            out.append(o)
    out.sort(key=_index)
    return out


def _index(o: Outcome[T, R]) -> int:
    return o.index
