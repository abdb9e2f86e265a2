"""Wrapper models: behaviour stacked around another chat model, and a way back to it.

As in pydantic-ai, a wrapper (flow control, routing of one model, a test
double that counts calls) is a :class:`~agentrt.llm.ChatModel` that holds
``inner`` and delegates; wrappers stack. What only the backend can do (say
how many calls it serves at once, score tokens) is found through
:meth:`WrapperModel.unwrap`, :func:`find_layer` or :func:`token_scorer`, never by digging
``inner`` out by hand.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TypeVar

from agentrt._clock import Clock, SystemClock
from agentrt.llm._client import ModelClient
from agentrt.llm._protocol import ChatModel, TokenScorer
from agentrt.llm._types import ChatRequest, ChatResult, StreamEvent

__all__ = [
    "WrapperModel",
    "find_layer",
    "layers",
    "max_concurrency",
    "token_scorer",
    "unwrap",
]

_L = TypeVar("_L")


class WrapperModel:
    """A chat model that delegates every call to ``inner``; subclasses add behaviour.

    ``model`` is the inner model's; ``name`` and ``clock`` default to its.
    """

    def __init__(
        self, inner: ChatModel, *, name: str | None = None, clock: Clock | None = None
    ) -> None:
        self.inner = inner
        self.model: str = inner.model
        self.name: str = name or inner.name
        self.clock: Clock = clock or inner.clock or SystemClock()

    async def complete(self, request: ChatRequest) -> ChatResult:
        return await self.inner.complete(request)

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        return self.inner.stream(request)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def unwrap(self) -> ChatModel:
        """The model at the bottom of the stack: the backend that serves the calls."""
        return unwrap(self)


def layers(model: ChatModel) -> Iterator[ChatModel]:
    """``model``, then each model it wraps, down to the backend."""
    current: ChatModel = model
    while True:
        yield current
        if not isinstance(current, WrapperModel):
            return
        current = current.inner


def unwrap(model: ChatModel) -> ChatModel:
    """The backend under every wrapper of ``model`` (``model`` itself when it wraps nothing)."""
    *_, bottom = layers(model)
    return bottom


def find_layer(model: ChatModel, kind: type[_L]) -> _L | None:
    """The outermost layer of ``model``'s stack that is a ``kind`` (a class or a
    runtime-checkable protocol), or ``None``."""
    for layer in layers(model):
        if isinstance(layer, kind):
            return layer
    return None


def max_concurrency(model: ChatModel) -> int | None:
    """The calls the backend under ``model`` serves at once, where its endpoint declares it."""
    backend = unwrap(model)
    if isinstance(backend, ModelClient):
        return backend.max_concurrency
    return None


def token_scorer(model: ChatModel) -> TokenScorer | None:
    """The outermost layer of ``model``'s stack that scores tokens (a local model), or ``None``."""
    for layer in layers(model):
        if isinstance(layer, TokenScorer):
            return layer
    return None
