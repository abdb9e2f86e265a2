"""Session affinity: send a session's calls to the replica that holds its prefix.

With several replicas of one model, a prefix cached on replica A helps only
calls that go to A. Round-robin or least-loaded routing spreads a session's
calls (and a scatter's calls sharing a prefix) over every replica, so each
one computes the prefix again. :class:`AffinityRouter` is the decision as a
plain state machine: a key (a session id, or a layout's prefix key) sticks
to the replica that served it, unless that replica is overloaded, in which
case the least-loaded replica takes the call and becomes the key's home.
:class:`AffinityModel` drives it over real clients.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import hashlib
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass

from agentrt._clock import Clock
from agentrt._errors import ConfigError
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult, StreamEvent

__all__ = ["AffinityModel", "AffinityRouter", "Route", "affinity_key", "request_key"]

_key: contextvars.ContextVar[str | None] = contextvars.ContextVar("agentrt_affinity", default=None)

# Bytes of the serialized messages that name a prompt's prefix when no key is set.
KEY_PREFIX_BYTES = 2048


@contextlib.contextmanager
def affinity_key(key: str) -> Iterator[None]:
    """Route the calls made inside this block by ``key`` (a session id, a prefix key)."""
    token = _key.set(key)
    try:
        yield
    finally:
        _key.reset(token)


def request_key(request: ChatRequest) -> str:
    """The key in force, or a hash of the request's first bytes.

    Prefix-stable prompts share their first bytes, so without an explicit
    key the calls of one layout still land together.
    """
    explicit = _key.get()
    if explicit is not None:
        return explicit
    h = hashlib.blake2b(digest_size=8)
    left = KEY_PREFIX_BYTES
    for m in request.messages:
        part = (m.role + "\x00" + m.content + "\x01").encode()[:left]
        h.update(part)
        left -= len(part)
        if left <= 0:
            break
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class Route:
    """Where a call goes and why (``home``, ``new`` or ``overloaded``)."""

    replica: str
    reason: str


class AffinityRouter:
    """Sticky key → replica assignment with an overload escape.

    A replica is overloaded for a key when it has ``max_inflight`` calls in
    flight, or ``slack`` more than the least-loaded replica. Up to
    ``memory`` keys are remembered (least recently used forgotten first).
    Call :meth:`route` when a call starts and :meth:`done` when it ends.
    """

    def __init__(
        self,
        replicas: Sequence[str],
        *,
        slack: int = 4,
        max_inflight: int | None = None,
        memory: int = 4096,
    ) -> None:
        if not replicas:
            raise ConfigError("affinity routing needs at least one replica")
        if len(set(replicas)) != len(replicas):
            raise ConfigError("affinity routing: replica names must be distinct")
        self.replicas = tuple(replicas)
        self.slack = slack
        self.max_inflight = max_inflight
        self.memory = memory
        self.inflight: dict[str, int] = dict.fromkeys(self.replicas, 0)
        self._home: collections.OrderedDict[str, str] = collections.OrderedDict()
        self.counts: collections.Counter[str] = collections.Counter()

    def home(self, key: str) -> str | None:
        return self._home.get(key)

    def _least_loaded(self) -> str:
        return min(self.replicas, key=lambda r: self.inflight[r])  # ties: first listed

    def _overloaded(self, replica: str) -> bool:
        load = self.inflight[replica]
        if self.max_inflight is not None and load >= self.max_inflight:
            return True
        return load - min(self.inflight.values()) > self.slack

    def route(self, key: str) -> Route:
        home = self._home.get(key)
        if home is not None and not self._overloaded(home):
            route = Route(home, "home")
        else:
            route = Route(self._least_loaded(), "new" if home is None else "overloaded")
        self._home[key] = route.replica
        self._home.move_to_end(key)
        while len(self._home) > self.memory:
            self._home.popitem(last=False)
        self.inflight[route.replica] += 1
        self.counts[route.reason] += 1
        return route

    def done(self, replica: str) -> None:
        if self.inflight[replica] <= 0:
            raise ValueError(f"replica {replica!r} has no call in flight")
        self.inflight[replica] -= 1


class AffinityModel:
    """A client over replicas of one model that routes by :func:`request_key`."""

    def __init__(
        self,
        replicas: Mapping[str, ChatModel],
        *,
        slack: int = 4,
        max_inflight: int | None = None,
        clock: Clock | None = None,
    ) -> None:
        if not replicas:
            raise ConfigError("affinity routing needs at least one replica")
        first = next(iter(replicas.values()))
        self.model: str = first.model
        self.name: str = "affinity"
        self.clock: Clock = clock or first.clock
        self.clients = dict(replicas)
        self.router = AffinityRouter(list(replicas), slack=slack, max_inflight=max_inflight)

    async def complete(self, request: ChatRequest) -> ChatResult:
        route = self.router.route(request_key(request))
        try:
            return await self.clients[route.replica].complete(request)
        finally:
            self.router.done(route.replica)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        route = self.router.route(request_key(request))
        events = self.clients[route.replica].stream(request)
        try:
            async for ev in events:
                yield ev
        finally:
            self.router.done(route.replica)
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()

    async def aclose(self) -> None:
        for c in self.clients.values():
            await c.aclose()
