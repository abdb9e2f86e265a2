"""What the simulated provider says about one request, as data.

:class:`~agentrt.sim._engine.SimEngine` reports a request's life as these
events to a sink; the HTTP layer turns them into bytes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentrt._json import JsonValue
from agentrt.tokens._counting import estimate_tokens

__all__ = [
    "Abort",
    "Begin",
    "Event",
    "Finish",
    "Reject",
    "SimRequest",
    "Sink",
    "Tokens",
    "error_body",
    "split_tokens",
]


@dataclass(frozen=True, slots=True)
class SimRequest:
    """One chat completion request, already parsed from its wire form."""

    model: str
    messages: tuple[tuple[str, str], ...]  # (role, content text)
    max_tokens: int
    stream: bool = False
    json_schema: dict[str, Any] | None = None
    seed: int | None = None


@dataclass(frozen=True, slots=True)
class Reject:
    """Answer with an error status and body, before any token."""

    status: int
    body: dict[str, JsonValue]
    headers: dict[str, str]
    kind: str


@dataclass(frozen=True, slots=True)
class Begin:
    """The response starts (at TTFT): status 200 with these headers."""

    request_id: str
    created: int
    headers: dict[str, str]


@dataclass(frozen=True, slots=True)
class Tokens:
    """A batch of output tokens, ready now."""

    text: str
    count: int


@dataclass(frozen=True, slots=True)
class Finish:
    """Decoding ended normally."""

    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Abort:
    """The response breaks: ``reset`` drops the connection, ``cut`` ends the body early."""

    kind: Literal["reset", "cut"]


Event = Reject | Begin | Tokens | Finish | Abort
Sink = Callable[[Event], Awaitable[None]]


def error_body(
    message: str, type_: str, code: str | None, **extra: JsonValue
) -> dict[str, JsonValue]:
    """The OpenAI error shape ``{"error": {"message", "type", "param", "code"}}``."""
    return {**extra, "error": {"message": message, "type": type_, "param": None, "code": code}}


def split_tokens(text: str) -> list[str]:
    """Cut ``text`` into as many non-empty pieces as its estimated token count."""
    n = estimate_tokens(text)
    size = len(text)
    return [text[i * size // n : (i + 1) * size // n] for i in range(n)]
