"""An httpx transport that streams an in-process ASGI app's response.

httpx's own ``ASGITransport`` runs the app to completion and buffers the
body, so a client cannot see time to first token through it. This one runs
the app in a task and hands body chunks to the client as the app sends them,
which lets tests measure TTFT and decode timing on a fake clock with no
socket. App failures surface as the httpx errors a real connection would
give, and closing the response early cancels the app, as a hang-up would.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
from starlette.types import ASGIApp, Message, Scope

__all__ = ["StreamingASGITransport"]


class _Failed:
    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


_END = object()
_Item = Message | _Failed | object


class _Exchange:
    """One request/response: the app task and the queue between it and the client."""

    def __init__(self, app: ASGIApp, scope: Scope, body: bytes) -> None:
        self.queue: asyncio.Queue[_Item] = asyncio.Queue()
        self.disconnected = asyncio.Event()
        self._body = body
        self._body_sent = False
        self.task = asyncio.create_task(self._run(app, scope), name="sim-asgi-app")

    async def _receive(self) -> Message:
        if not self._body_sent:
            self._body_sent = True
            return {"type": "http.request", "body": self._body, "more_body": False}
        await self.disconnected.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: Message) -> None:
        self.queue.put_nowait(message)

    async def _run(self, app: ASGIApp, scope: Scope) -> None:
        try:
            await app(scope, self._receive, self._send)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.queue.put_nowait(_Failed(exc))
        self.queue.put_nowait(_END)

    async def close(self) -> None:
        self.disconnected.set()
        if not self.task.done():
            self.task.cancel()
        try:
            await self.task
        except asyncio.CancelledError:
            # the exchange's own cancellation ends here; the caller's must not
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise


class _Body(httpx.AsyncByteStream):
    def __init__(self, exchange: _Exchange) -> None:
        self._x = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while True:
            item = await self._x.queue.get()
            if isinstance(item, _Failed):
                raise httpx.RemoteProtocolError(
                    "peer closed connection without sending complete message body"
                ) from item.exc
            if item is _END:
                raise httpx.RemoteProtocolError("app ended without completing the response body")
            assert isinstance(item, dict)
            if item["type"] != "http.response.body":
                continue
            data = bytes(item.get("body", b""))
            if data:
                yield data
            if not item.get("more_body", False):
                return

    async def aclose(self) -> None:
        await self._x.close()


class StreamingASGITransport(httpx.AsyncBaseTransport):
    """Send httpx requests to an ASGI ``app`` in this event loop, streaming responses.

    ``raise_app_exceptions`` (default True) re-raises an exception the app
    raises before starting a response, for debugging; otherwise, and always
    after the response started, the client sees ``httpx.RemoteProtocolError``
    as from a dropped connection. ``ConnectionError`` from the app (the
    simulator's reset) is always a dropped connection.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        raise_app_exceptions: bool = True,
        root_path: str = "",
        client: tuple[str, int] = ("127.0.0.1", 50000),
    ) -> None:
        self.app = app
        self.raise_app_exceptions = raise_app_exceptions
        self.root_path = root_path
        self.client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        url = request.url
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "scheme": url.scheme,
            "path": url.path,
            "raw_path": url.raw_path.split(b"?")[0],
            "query_string": url.query,
            "server": (url.host, url.port or (443 if url.scheme == "https" else 80)),
            "client": self.client,
            "root_path": self.root_path,
            "state": {},
        }
        x = _Exchange(self.app, scope, body)
        try:
            start = await self._await_start(x)
        except BaseException:
            await x.close()
            raise
        headers = [(bytes(k), bytes(v)) for k, v in start.get("headers", [])]
        return httpx.Response(int(start["status"]), headers=headers, stream=_Body(x))

    async def _await_start(self, x: _Exchange) -> Message:
        while True:
            item = await x.queue.get()
            if isinstance(item, dict) and item.get("type") == "http.response.start":
                return item
            if isinstance(item, _Failed):
                if self.raise_app_exceptions and not isinstance(item.exc, ConnectionError):
                    raise item.exc
                raise httpx.RemoteProtocolError(
                    "Server disconnected without sending a response."
                ) from item.exc
            if item is _END:
                raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
