"""API keys, each belonging to a named tenant.

A tenant sees only its own bugs, so every request resolves to a tenant
before it reaches a route. A key travels as ``X-API-Key`` or
``Authorization: Bearer KEY``; the ``key`` query parameter is accepted only
where the caller asks for it (the SSE route, because the browser's
``EventSource`` cannot set headers). Keys are compared in constant time
against every configured key, and never printed: :class:`ApiKeys`'s repr
names tenants, not keys. No keys configured means an open service (one
tenant, :data:`OPEN_TENANT`), which :mod:`fixbugs.service.serve` allows
only on a loopback address, and which answers only its own ``Host`` and
``Origin`` (:mod:`.same_origin`), since a web page can reach loopback too.

Keys come from a file (``tenant key`` or ``tenant:key`` per line, ``#``
comments) or the environment (``FIXBUGS_API_KEYS="acme:k1,globex:k2"``); a
bare key without a tenant belongs to :data:`DEFAULT_TENANT`.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from fixbugs.errors import InputError

__all__ = ["DEFAULT_TENANT", "OPEN_TENANT", "ApiKeys", "parse_keys"]

DEFAULT_TENANT = "default"
OPEN_TENANT = "local"
_TENANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def parse_keys(text: str, *, source: str) -> dict[str, str]:
    """``key -> tenant`` from ``tenant:key`` / ``tenant key`` entries (lines or commas)."""
    out: dict[str, str] = {}
    entries = [e.strip() for line in text.splitlines() for e in line.split(",")]
    for n, entry in enumerate(entries, 1):
        if not entry or entry.startswith("#"):
            continue
        sep = ":" if ":" in entry else " " if " " in entry else None
        if sep is None:
            tenant, key = DEFAULT_TENANT, entry
        else:
            tenant, _, key = (s.strip() for s in entry.partition(sep))
        if not _TENANT.match(tenant) or not key:
            # never echo the entry: it holds a key
            raise InputError(f"{source}: entry {n} is not 'tenant:key' (tenant: letters, digits)")
        out[key] = tenant
    return out


class ApiKeys:
    """Which tenant a presented key belongs to."""

    def __init__(self, keys: Mapping[str, str] | Iterable[str] = ()) -> None:
        pairs = keys.items() if isinstance(keys, Mapping) else ((k, DEFAULT_TENANT) for k in keys)
        self._keys = tuple((k.encode(), t) for k, t in pairs if k)

    @classmethod
    def from_file(cls, path: Path) -> ApiKeys:
        try:
            text = path.read_text()
        except OSError as exc:
            raise InputError(f"cannot read the API key file {path}: {exc.strerror}") from None
        return cls(parse_keys(text, source=str(path)))

    def items(self) -> list[tuple[str, str]]:
        """``(key, tenant)`` pairs, to merge key sources; never log them."""
        return [(k.decode(), t) for k, t in self._keys]

    def __repr__(self) -> str:
        return f"ApiKeys(tenants={sorted(self.tenants)!r})"

    @property
    def tenants(self) -> frozenset[str]:
        return frozenset(t for _, t in self._keys) or frozenset({OPEN_TENANT})

    @property
    def open(self) -> bool:
        return not self._keys

    def presented(
        self, headers: Mapping[str, str], query: Mapping[str, str], *, allow_query: bool = False
    ) -> str | None:
        if key := headers.get("x-api-key"):
            return key
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token:
            return token.strip()
        return (query.get("key") or None) if allow_query else None

    def tenant(self, key: str | None) -> str | None:
        """The tenant of ``key``, :data:`OPEN_TENANT` on an open service, else None."""
        if self.open:
            return OPEN_TENANT
        if key is None:
            return None
        given = key.encode()
        found: str | None = None
        # compare against every key so timing does not reveal which matched
        for k, tenant in self._keys:
            if hmac.compare_digest(given, k):
                found = tenant
        return found

    def allows(self, key: str | None) -> bool:
        return self.tenant(key) is not None
