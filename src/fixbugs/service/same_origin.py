"""A server without keys answers only requests addressed to it, from its own pages.

Without keys, whatever reaches the port may submit a bug, and a web page in
the developer's browser can reach a loopback port: a cross-site form POST
(``multipart/form-data`` is a "simple" request, sent without a preflight)
goes to ``http://127.0.0.1:8000``, and DNS rebinding points a name the page
owns at ``127.0.0.1``, after which even reading the answers is same-origin
to the browser. Two checks refuse both with a 403:

- the ``Host`` must name the server: ``localhost``, ``127.0.0.1``,
  ``[::1]``, the address the request arrived on, or a name the operator
  allows (``--allowed-host``); a rebound name is none of these. Ports are
  not compared: any port on a loopback name is this machine (a forwarded
  port keeps working), and rebinding needs a foreign name;
- an ``Origin``, which browsers send on cross-site requests and POSTs, must
  be the server's own (scheme, the same host and port as ``Host``), so a
  page served elsewhere, even on another loopback port, is refused. The
  dashboard is served by this server, so its requests pass, and its
  ``EventSource`` (same-origin, usually without ``Origin``) too.

A server with keys is not wrapped: a page has no key, and the app sends no
CORS headers, so a browser never lets a foreign page attach one.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from fixbugs.errors import InputError

__all__ = ["LOOPBACK_NAMES", "SameOrigin", "host_name"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
_LABEL = r"[a-z0-9_][a-z0-9_-]{0,62}"
_DNS = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*\.?$")
_DEFAULT_PORT = {"http": 80, "https": 443, "ws": 80, "wss": 443}


@dataclass(frozen=True, slots=True)
class _Authority:
    host: str  # lower case; an IPv6 address in brackets
    port: int | None


def host_name(name: str) -> str:
    """``name`` (a DNS name or an IP address, no port) in the form ``Host`` carries."""
    text = name.strip().lower()
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        ip = ipaddress.ip_address(bare)
    except ValueError:
        if not _DNS.match(text):
            raise InputError(f"allowed host {name!r} is not a host name or address") from None
        return text.rstrip(".")
    return f"[{ip.compressed}]" if ip.version == 6 else ip.compressed


def _authority(value: str) -> _Authority | None:
    """``host[:port]`` as a header carries it, or None if it is not one."""
    if value.startswith("["):
        end = value.find("]")
        host, rest = value[: end + 1], value[end + 1 :]
        if end < 0 or (rest and not rest.startswith(":")):
            return None
        port = rest[1:] if rest else None
    else:
        host, sep, port_text = value.partition(":")
        port = port_text if sep else None
    if port is not None and not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        return None
    try:
        return _Authority(host_name(host), int(port) if port else None)
    except InputError:
        return None


class SameOrigin:
    """Refuses a request whose ``Host`` or ``Origin`` is not this server's own."""

    def __init__(self, app: ASGIApp, allowed_hosts: Iterable[str] = ()) -> None:
        self.app = app
        self.names = LOOPBACK_NAMES | {host_name(h) for h in allowed_hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        why = self.refusal(scope)
        if why is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            await _forbidden(send, why)

    def refusal(self, scope: Scope) -> str | None:
        """Why this request is not the server's own, or None when it is."""
        headers = dict(scope.get("headers") or ())
        raw_host = headers.get(b"host", b"").decode("latin-1")
        host = _authority(raw_host)
        if host is None or host.host not in self.names | self._arrived_on(scope):
            return f"Host {raw_host[:100]!r} is not a name of this server (see --allowed-host)"
        origin = headers.get(b"origin")
        if origin is None:
            return None
        text = origin.decode("latin-1")
        scheme, sep, rest = text.partition("://")
        own = _DEFAULT_PORT.get(str(scope.get("scheme", "http")))
        theirs = _authority(rest) if sep and scheme.lower() in _DEFAULT_PORT else None
        if (
            theirs is None
            or theirs.host != host.host
            or (theirs.port or _DEFAULT_PORT[scheme.lower()]) != (host.port or own)
        ):
            return f"Origin {text[:100]!r} is not this server's own"
        return None

    @staticmethod
    def _arrived_on(scope: Scope) -> frozenset[str]:
        server = scope.get("server")
        if not server or not isinstance(server[0], str):
            return frozenset()
        try:
            return frozenset({host_name(server[0])})
        except InputError:
            return frozenset()


async def _forbidden(send: Send, why: str) -> None:
    detail = f"refused: {why}; a server without API keys answers only its own pages"
    payload = json.dumps({"detail": detail}).encode()
    start: dict[str, Any] = {
        "type": "http.response.start",
        "status": 403,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(payload)).encode()),
        ],
    }
    await send(start)
    await send({"type": "http.response.body", "body": payload})
