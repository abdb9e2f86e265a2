"""A request body's bounds, in size and in time, enforced while it arrives.

Size: ``Content-Length`` over the limit is refused before a byte is read; a
body without one (chunked) is counted as it streams and cut off at the
limit, so no upload can fill memory or the disk's temporary files. Only the
upload routes take a large body: every other route's body (JSON) has a small
cap, so nothing large is ever parsed, validated or echoed.

Time: a body that makes no progress for ``idle_s``, or is still incomplete
``total_s`` after the request began, is answered 408 and its connection
closed. Without this a client that sends headers and a few bytes holds a
socket and a request forever: uvicorn's keep-alive timeout only covers the
wait between requests, never a stalled body. The timers run on the injected
clock, and only while a body is still arriving: a streaming response's
later ``receive`` (waiting for the client to go) is never timed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agentrt import Clock

__all__ = ["BodyBounds", "BodyLimit"]


@dataclass(frozen=True, slots=True)
class BodyBounds:
    max_bytes: int = 64 << 20  # a body on one of ``large_paths``
    max_small_bytes: int = 64 << 10  # a body on any other path
    idle_s: float = 30.0  # longest wait for the body's next chunk
    total_s: float = 600.0  # longest time for the whole body
    large_paths: frozenset[str] = frozenset()

    def limit_for(self, path: str) -> int:
        if path in self.large_paths:
            return self.max_bytes
        return min(self.max_bytes, self.max_small_bytes)


@dataclass(frozen=True, slots=True)
class _Refusal:
    status: int
    detail: str


class _Cut(Exception):
    """Raised into the app's body read; the middleware answers instead of the app."""


class _Body:
    """One request's ``receive``, counted and timed until the body is complete."""

    def __init__(self, receive: Receive, limit: int, bounds: BodyBounds, clock: Clock) -> None:
        self._receive = receive
        self._limit = limit
        self._idle_s = bounds.idle_s
        self._total_s = bounds.total_s
        self._clock = clock
        self._deadline = clock.now() + bounds.total_s
        self._seen = 0
        self.complete = False
        self.refusal: _Refusal | None = None

    def _cut(self, status: int, detail: str) -> _Cut:
        self.refusal = _Refusal(status, detail)
        return _Cut(detail)

    async def receive(self) -> Message:
        if self.refusal is not None:  # the app reads on after the cut: the client is gone
            return {"type": "http.disconnect"}
        if self.complete:
            return await self._receive()
        msg = await self._within(min(self._idle_s, self._deadline - self._clock.now()))
        if msg["type"] == "http.request":
            self._seen += len(msg.get("body", b""))
            if self._seen > self._limit:
                raise self._cut(413, _too_large(self._limit))
            self.complete = not msg.get("more_body", False)
        else:  # http.disconnect: nothing more will come
            self.complete = True
        return msg

    async def _within(self, wait_s: float) -> Message:
        if wait_s <= 0:
            raise self._stalled()
        rx = asyncio.ensure_future(self._receive())
        timer = asyncio.ensure_future(self._clock.sleep(wait_s))
        try:
            await asyncio.wait({rx, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            if not rx.done():
                rx.cancel()
        if rx.done() and not rx.cancelled():
            return rx.result()
        raise self._stalled()

    def _stalled(self) -> _Cut:
        if self._deadline - self._clock.now() <= 0:
            return self._cut(408, f"request body not complete within {self._total_s:g} s")
        return self._cut(408, f"request body stalled: no data for {self._idle_s:g} s")


class BodyLimit:
    def __init__(self, app: ASGIApp, bounds: BodyBounds, clock: Clock) -> None:
        self.app = app
        self.bounds = bounds
        self.clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.bounds.limit_for(scope.get("path", ""))
        length = dict(scope.get("headers") or ()).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            await _answer(send, _Refusal(413, _too_large(limit)))
            return
        body = _Body(receive, limit, self.bounds, self.clock)
        started = False  # the app's own response began before any cut
        answered = False  # once cut, the app's answer (its 400 for a broken body) is replaced

        async def guarded(msg: Message) -> None:
            nonlocal started, answered
            if body.refusal is None:
                started = True
                await send(msg)
            elif not (started or answered):
                answered = True
                await _answer(send, body.refusal)

        with contextlib.suppress(_Cut):
            await self.app(scope, body.receive, guarded)
        if body.refusal is not None and not (started or answered):
            await _answer(send, body.refusal)


def _too_large(limit: int) -> str:
    return f"request body is larger than the limit of {limit} bytes"


async def _answer(send: Send, refusal: _Refusal) -> None:
    """A one-line JSON refusal that closes the connection (the body's rest is never read)."""
    payload = json.dumps({"detail": refusal.detail}).encode()
    start: dict[str, Any] = {
        "type": "http.response.start",
        "status": refusal.status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()),
            (b"connection", b"close"),
        ],
    }
    await send(start)
    await send({"type": "http.response.body", "body": payload})
