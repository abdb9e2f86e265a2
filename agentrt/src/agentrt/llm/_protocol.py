"""The chat-model protocol: what callers of a model need, whoever serves it.

Backends subclass :class:`~agentrt.llm._client.ModelClient` (which does the
timing and the records); wrappers that add behaviour around another model —
flow control (:class:`~agentrt.flow.RetryingModel` and its layers), routing, replica
affinity — implement this protocol instead of subclassing a backend and
stubbing its primitives, in the manner of pydantic-ai's wrapper models.
Code that only *uses* a model should accept a :class:`ChatModel`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from agentrt._clock import Clock
from agentrt.llm._types import ChatRequest, ChatResult, StreamEvent

__all__ = ["ChatModel", "TokenScorer"]


@runtime_checkable
class ChatModel(Protocol):
    """A chat model: one call, one stream, a name for metrics, a clock for timing."""

    model: str
    name: str
    clock: Clock

    async def complete(self, request: ChatRequest) -> ChatResult:
        """One non-streaming call: the whole answer with usage and timing."""
        ...

    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Text deltas as they arrive, then one ``Completed`` event."""
        ...

    async def aclose(self) -> None:
        """Release connections or model memory."""
        ...


@runtime_checkable
class TokenScorer(Protocol):
    """A model that scores text instead of writing it (a local model with logits).

    Find it under any wrappers with :func:`~agentrt.llm.token_scorer`;
    hosted endpoints do not implement it.
    """

    async def score(self, prefix: str, continuation: str) -> float:
        """Mean log-probability of ``continuation``'s tokens after ``prefix``."""
        ...
