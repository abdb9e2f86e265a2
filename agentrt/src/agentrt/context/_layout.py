"""Prefix-stable prompts: what the calls share comes first, byte for byte.

Prefix caching (vLLM, SGLang's RadixAttention, OpenAI's automatic prompt
caching) reuses the KV of a prompt's leading tokens only when they are
identical to a prompt seen before. A scatter whose calls each start with
their own chunk (or a system prompt that names the chunk) shares nothing;
the same calls with the system prompt, the bug report and the evidence so
far first, and the chunk last, share all of that. :class:`PromptLayout`
builds messages that way, so every call of a scatter carries the same
prefix bytes, and names that prefix (:attr:`PromptLayout.prefix_key`) so a
router can send the calls to the replica that already holds it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentrt.llm._types import ChatRequest, Message, RequestOptions
from agentrt.metrics._record import CallRecord
from agentrt.tokens._counting import MESSAGE_OVERHEAD_TOKENS, estimate_tokens

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["PrefixUse", "PromptLayout", "Section", "prefix_use"]

# Between the shared sections and the varying part; part of the prefix.
_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class Section:
    """A titled block of shared context (the bug report, the evidence so far)."""

    title: str
    body: str

    def render(self) -> str:
        return f"## {self.title}\n{self.body.rstrip()}"


@dataclass(frozen=True, slots=True)
class PromptLayout:
    """The shared part of a family of calls; :meth:`request` appends the varying part.

    Invariant: for one layout, the messages of every request are identical
    up to the start of the varying text, which is the last thing in the last
    message. Sections are rendered in the order given; callers append new
    evidence at the end, so growing evidence extends the prefix rather than
    changing it.
    """

    system: str
    sections: tuple[Section, ...] = ()

    @classmethod
    def of(cls, system: str, sections: Iterable[tuple[str, str]] = ()) -> PromptLayout:
        return cls(system, tuple(Section(t, b) for t, b in sections))

    def extended(self, title: str, body: str) -> PromptLayout:
        """This layout with one more section at the end (the prefix only grows)."""
        return PromptLayout(self.system, (*self.sections, Section(title, body)))

    @property
    def shared_text(self) -> str:
        """The user message's shared head, separator included."""
        if not self.sections:
            return ""
        return "\n\n".join(s.render() for s in self.sections) + _SEPARATOR

    @property
    def prefix_key(self) -> str:
        """A short stable name of the shared prefix (for affinity routing)."""
        h = hashlib.blake2b(digest_size=8)
        h.update(self.system.encode())
        h.update(b"\x00")
        h.update(self.shared_text.encode())
        return h.hexdigest()

    @property
    def shared_tokens(self) -> int:
        """Estimated tokens of the shared prefix (system message included)."""
        return (
            estimate_tokens(self.system)
            + MESSAGE_OVERHEAD_TOKENS
            + estimate_tokens(self.shared_text)
        )

    def messages(self, varying: str) -> tuple[Message, ...]:
        return (Message("system", self.system), Message("user", self.shared_text + varying))

    def request(self, varying: str, **kw: Unpack[RequestOptions]) -> ChatRequest:
        """A request whose only difference from its siblings is ``varying``, at the end."""
        return ChatRequest(messages=self.messages(varying), **kw)


@dataclass(frozen=True, slots=True)
class PrefixUse:
    """How much of a set of calls' input the provider served from its cache.

    ``effective_prefill_tokens`` is the input that was actually computed
    (input minus cached), the figure prefill time follows.
    """

    calls: int
    input_tokens: int
    cached_tokens: int

    @property
    def cached_share(self) -> float:
        return self.cached_tokens / self.input_tokens if self.input_tokens else 0.0

    @property
    def effective_prefill_tokens(self) -> int:
        return self.input_tokens - self.cached_tokens


def prefix_use(records: Sequence[CallRecord]) -> PrefixUse:
    """Cached-token totals of the model calls among ``records``."""
    model = [r for r in records if r.kind == "model"]
    return PrefixUse(
        calls=len(model),
        input_tokens=sum(r.input_tokens for r in model),
        cached_tokens=sum(r.cached_tokens for r in model),
    )
