"""A request body limit enforced while the body arrives, not after.

``Content-Length`` over the limit is refused before a byte is read; a body
without one (chunked) is counted as it streams and cut off at the limit, so
no upload can fill memory or the disk's temporary files.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimit"]


class _TooLarge(Exception):
    pass


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._refuse(send)
            return
        seen = 0
        over = False  # once set, the app's own answer is replaced by a 413
        refused = False

        async def counted() -> Message:
            nonlocal seen, over
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_bytes:
                    over = True
                    raise _TooLarge
            return msg

        async def guarded(msg: Message) -> None:
            nonlocal refused
            if not over:
                await send(msg)
            elif not refused:
                refused = True
                await self._refuse(send)

        with contextlib.suppress(_TooLarge):
            await self.app(scope, counted, guarded)
        if over and not refused:
            refused = True
            await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(
            {"detail": f"request body is larger than the limit of {self.max_bytes} bytes"}
        ).encode()
        start: dict[str, Any] = {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
        await send(start)
        await send({"type": "http.response.body", "body": body})
