"""A single-consumer, unbounded in-process channel.

Scatter-gather pushes one result per call through it, so it is kept to a
deque and one waiter future: cheaper per item than :class:`asyncio.Queue`,
which the overhead benchmark would otherwise measure.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Generic, TypeVar

__all__ = ["Channel"]

T = TypeVar("T")


class Channel(Generic[T]):
    """``push`` from any task of the loop; one consumer iterates until ``close``."""

    __slots__ = ("_closed", "_items", "_waiter")

    def __init__(self) -> None:
        self._items: collections.deque[T] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    def push(self, item: T) -> None:
        self._items.append(item)
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def close(self) -> None:
        self._closed = True
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    def __aiter__(self) -> Channel[T]:
        return self

    async def __anext__(self) -> T:
        while not self._items:
            if self._closed:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._items.popleft()
