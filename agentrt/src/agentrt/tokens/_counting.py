"""Token counting: exact where a tokenizer is at hand, a documented estimate otherwise.

The estimate is one token per four characters of UTF-8 text (rounded up),
plus four tokens of framing per chat message. That is OpenAI's published rule
of thumb for English; it runs high for plain prose and low for dense code or
non-Latin scripts, typically within ±25%. Budgets built on it (chunk sizes,
rate-limit reservations) are corrected from the usage a provider reports.
The provider simulator counts with the same estimate, so the client and the
simulator agree exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

__all__ = [
    "MESSAGE_OVERHEAD_TOKENS",
    "EstimateCounter",
    "ExactCounter",
    "TokenCounter",
    "estimate_tokens",
]

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4


def estimate_tokens(text: str) -> int:
    """Estimated token count of ``text`` (0 for the empty string)."""
    if not text:
        return 0
    return math.ceil(len(text.encode("utf-8")) / CHARS_PER_TOKEN)


@runtime_checkable
class TokenCounter(Protocol):
    exact: bool

    def count(self, text: str) -> int: ...

    def count_messages(self, contents: Iterable[str]) -> int: ...


class EstimateCounter:
    """The four-characters-per-token estimate."""

    exact = False

    def count(self, text: str) -> int:
        return estimate_tokens(text)

    def count_messages(self, contents: Iterable[str]) -> int:
        return sum(self.count(c) + MESSAGE_OVERHEAD_TOKENS for c in contents)


class ExactCounter:
    """Counts with a real tokenizer function (e.g. the embedded model's)."""

    exact = True

    def __init__(self, tokenize: Callable[[str], list[int]]) -> None:
        self._tokenize = tokenize

    def count(self, text: str) -> int:
        return len(self._tokenize(text)) if text else 0

    def count_messages(self, contents: Iterable[str]) -> int:
        return sum(self.count(c) + MESSAGE_OVERHEAD_TOKENS for c in contents)
