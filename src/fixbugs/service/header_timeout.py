"""A connection must deliver its request headers in time, or it is closed.

uvicorn's ASGI app sees a request only once its headers are complete, so no
middleware can time the header phase (``BodyLimit`` times the body). And
uvicorn's own timers leave it open: a fresh connection has no timer at all,
and the keep-alive timer after a response is cancelled by the first byte
that arrives. A client that opens a connection and sends half a request
line, or headers without their blank line, then nothing (slowloris), holds a
socket and a file descriptor until it goes; a few hundred exhaust the
server's descriptors.

:func:`header_timeout_h11` is uvicorn's h11 protocol with one timer: it runs
while the server awaits a request, from the connection's opening or the end
of its previous response until the next request's headers are complete, and
closes the connection when it fires. The h11 implementation is pinned: with
``httptools`` installed uvicorn's ``"auto"`` would choose another parser,
which this timer does not cover. An idle keep-alive connection is closed by
whichever comes first, uvicorn's keep-alive timeout (5 s by default) or this
one; a body a client is still sending after its response (an early 401, say)
is cut by this one too.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["DEFAULT_HEADER_TIMEOUT_S", "HeaderTimeoutH11", "header_timeout_h11"]

DEFAULT_HEADER_TIMEOUT_S = 10.0


class HeaderTimeoutH11(H11Protocol):
    """:class:`H11Protocol` that closes a connection whose request headers stall."""

    header_timeout_s: ClassVar[float] = DEFAULT_HEADER_TIMEOUT_S
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._watch_headers()

    def handle_events(self) -> None:
        super().handle_events()
        self._watch_headers()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may parse a pipelined request: handle_events
        self._watch_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_header_timer()
        super().connection_lost(exc)

    def _watch_headers(self) -> None:
        """Run the timer exactly while the server owes no response.

        Invariant: h11's server state is IDLE until a request's headers are
        parsed (then SEND_RESPONSE) and DONE once its response is complete,
        until the next cycle begins (IDLE again). So ``our_state`` in
        {IDLE, DONE} means "awaiting the next request's headers". The timer
        is armed once when that wait begins, never re-armed by bytes that
        arrive during it, and stopped when the headers are complete.
        """
        awaiting = self.conn.our_state in (h11.IDLE, h11.DONE)
        if not awaiting or self.transport.is_closing():
            self._stop_header_timer()
        elif self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_late)

    def _stop_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()  # connection_lost tells h11 and ends the cycle


def header_timeout_h11(timeout_s: float) -> type[HeaderTimeoutH11]:
    """The protocol class for ``uvicorn.Config(http=...)``, with ``timeout_s`` bound.

    uvicorn builds one protocol per connection from a class and its config,
    so the timeout travels as a class attribute of a subclass.
    """
    if not timeout_s > 0:
        raise ValueError(f"the header timeout must be positive, not {timeout_s!r}")

    class Bound(HeaderTimeoutH11):
        header_timeout_s = timeout_s

    return Bound
