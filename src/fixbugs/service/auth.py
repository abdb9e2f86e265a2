"""API keys: who may submit bugs and read reports.

A key travels as ``X-API-Key``, ``Authorization: Bearer KEY``, or — only
for the browser's ``EventSource``, which cannot set headers — the ``key``
query parameter. Keys are compared in constant time. No keys configured
means an open service, which :func:`fixbugs.service.serve` allows only on
a loopback address.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping

__all__ = ["ApiKeys"]


class ApiKeys:
    def __init__(self, keys: Iterable[str] = ()) -> None:
        self._keys = tuple(k.encode() for k in keys if k)

    @property
    def open(self) -> bool:
        return not self._keys

    def presented(self, headers: Mapping[str, str], query: Mapping[str, str]) -> str | None:
        if key := headers.get("x-api-key"):
            return key
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token:
            return token.strip()
        return query.get("key") or None

    def allows(self, key: str | None) -> bool:
        if self.open:
            return True
        if key is None:
            return False
        given = key.encode()
        # compare against every key so timing does not reveal which matched
        ok = False
        for k in self._keys:
            ok |= hmac.compare_digest(given, k)
        return ok
