"""Model routing: which model serves each stage, and what to fall back to.

Judgment (planning, reviewing, judging) deserves a large model; routine
map steps do not. A :class:`RoutingTable` names, per stage or role, an
ordered list of endpoints: the first is preferred, the rest are fallbacks
used when it is unavailable (circuit open, throttled, or failing after its
own retries). :class:`RoutedModel` is a chat model wrapper that applies a
table to a set of clients — typically one
:class:`~agentrt.flow.RetryingModel` stack per endpoint, so each
endpoint keeps its own limits and breaker.

Configuration is a mapping, e.g. the ``[routing]`` table of agentrt.toml::

    [routing]
    default = ["small"]
    plan = ["large", "small"]
    judge = ["large", "medium"]
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agentrt._clock import Clock
from agentrt._errors import ConfigError, ProviderError
from agentrt.flow._breaker import CircuitOpen
from agentrt.flow._deadline import DeadlineExceeded
from agentrt.flow._throttle import Throttled
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult, Completed, StreamEvent
from agentrt.metrics._recorder import MetricsRecorder, current_stage

__all__ = ["RoutedModel", "RoutingTable"]

DEFAULT = "default"


@dataclass(frozen=True, slots=True)
class RoutingTable:
    """Stage (or role) → endpoints in order of preference; ``default`` for the rest."""

    routes: Mapping[str, tuple[str, ...]]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, known: Sequence[str] = ()) -> RoutingTable:
        """Validate a config table; a bad entry raises a one-line ConfigError."""
        routes: dict[str, tuple[str, ...]] = {}
        for stage, value in data.items():
            chain = (value,) if isinstance(value, str) else value
            if not isinstance(chain, list | tuple) or not chain:
                raise ConfigError(f"routing.{stage}: expected an endpoint name or a list of them")
            names = tuple(str(v) for v in chain)
            unknown = [n for n in names if known and n not in known]
            if unknown:
                raise ConfigError(
                    f"routing.{stage}: unknown endpoint {unknown[0]!r} "
                    f"(known: {', '.join(sorted(known))})"
                )
            routes[str(stage)] = names
        if DEFAULT not in routes:
            raise ConfigError("routing: a 'default' route is required")
        return cls(routes)

    def chain(self, stage: str) -> tuple[str, ...]:
        return self.routes.get(stage) or self.routes[DEFAULT]


def _falls_back(exc: BaseException) -> bool:
    """Endpoint trouble moves to the next endpoint; a caller's deadline does not."""
    if isinstance(exc, DeadlineExceeded):
        return False
    if isinstance(exc, CircuitOpen | Throttled):
        return True
    return isinstance(exc, ProviderError) and exc.retryable


class RoutedModel:
    """Sends each call to its stage's first available endpoint.

    The request's ``model`` is cleared when it moves to a fallback, so each
    endpoint uses its own configured model.
    """

    def __init__(
        self,
        clients: Mapping[str, ChatModel],
        table: RoutingTable,
        *,
        clock: Clock | None = None,
        recorder: MetricsRecorder | None = None,
    ) -> None:
        missing = sorted({n for c in table.routes.values() for n in c} - set(clients))
        if missing:
            raise ConfigError(f"routing names endpoint(s) with no client: {', '.join(missing)}")
        first = clients[table.chain(DEFAULT)[0]]
        self.model: str = first.model
        self.name: str = "router"
        self.clock: Clock = clock or first.clock
        self._recorder = recorder
        self.clients = dict(clients)
        self.table = table
        self.fallbacks_taken = 0

    def route(self, request: ChatRequest) -> tuple[str, ...]:
        return self.table.chain(request.stage or current_stage())

    async def complete(self, request: ChatRequest) -> ChatResult:
        chain = self.route(request)
        for i, name in enumerate(chain):
            req = request if i == 0 else replace(request, model=None)
            try:
                return await self.clients[name].complete(req)
            except Exception as exc:
                if i + 1 == len(chain) or not _falls_back(exc):
                    raise
                self.fallbacks_taken += 1
        raise AssertionError("unreachable: a routing chain is never empty")

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        chain = self.route(request)
        for i, name in enumerate(chain):
            req = request if i == 0 else replace(request, model=None)
            started = False
            events = self.clients[name].stream(req)
            try:
                async for ev in events:
                    started = True
                    yield ev
                    if isinstance(ev, Completed):
                        return
                return
            except Exception as exc:
                if started or i + 1 == len(chain) or not _falls_back(exc):
                    raise
                self.fallbacks_taken += 1
            finally:
                # a caller's break closes the endpoint's stream now, not at collection
                aclose = getattr(events, "aclose", None)
                if aclose is not None:
                    await aclose()

    async def aclose(self) -> None:
        for c in self.clients.values():
            await c.aclose()
