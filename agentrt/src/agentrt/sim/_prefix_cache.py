"""Automatic prefix caching, as serving engines do it, for the simulator.

vLLM and SGLang keep the KV cache of prompt prefixes they computed and
reuse it when a later prompt starts with the same tokens; OpenAI reports
the reused part as ``prompt_tokens_details.cached_tokens``. This is that
mechanism as a plain state machine: a prompt is cut into fixed-size blocks,
each block is named by a hash chained over every block before it (so a
block matches only when the whole prefix up to it matches), and the blocks
live in an LRU bounded by a token capacity.

Blocks are measured in bytes at the simulator's token estimate (four bytes
per token), so cached token counts agree with the prompt token counts the
simulator reports.
"""

from __future__ import annotations

import collections
import hashlib
from collections.abc import Iterable, Iterator

from agentrt.tokens._counting import CHARS_PER_TOKEN

__all__ = ["PrefixCache", "serialize_messages"]


def serialize_messages(messages: Iterable[tuple[str, str]]) -> bytes:
    """The byte form whose prefixes are cached: role and content, separated.

    A change of role or of any earlier content changes every later block,
    as it changes every later token's KV in a real engine.
    """
    return b"".join(
        role.encode() + b"\x00" + content.encode("utf-8") + b"\x01" for role, content in messages
    )


class PrefixCache:
    """An LRU of prompt-prefix blocks holding at most ``capacity_tokens`` tokens.

    ``lookup`` says how many leading tokens of a prompt are cached (and
    marks those blocks recently used); ``insert`` records a computed
    prompt's full blocks. Engines insert only after prefill, so requests
    that arrive together with a new prefix all miss, as they do on a real
    server.
    """

    def __init__(self, capacity_tokens: int, block_tokens: int = 16) -> None:
        if capacity_tokens < 0 or block_tokens < 1:
            raise ValueError("capacity must be >= 0 and block size >= 1")
        self.capacity_tokens = capacity_tokens
        self.block_tokens = block_tokens
        # invariant: len(_blocks) * block_tokens <= capacity_tokens
        self._blocks: collections.OrderedDict[bytes, None] = collections.OrderedDict()
        self.hits_tokens = 0
        self.lookups_tokens = 0

    @property
    def size_tokens(self) -> int:
        return len(self._blocks) * self.block_tokens

    def _chain(self, data: bytes) -> Iterator[bytes]:
        size = self.block_tokens * CHARS_PER_TOKEN
        h = b""
        for start in range(0, len(data) - size + 1, size):
            h = hashlib.blake2b(h + data[start : start + size], digest_size=16).digest()
            yield h

    def lookup(self, messages: Iterable[tuple[str, str]], prompt_tokens: int) -> int:
        """Leading tokens of this prompt already cached (at most ``prompt_tokens``)."""
        matched: list[bytes] = []
        for h in self._chain(serialize_messages(messages)):
            if h not in self._blocks:
                break
            matched.append(h)
        self._touch(matched)
        cached = min(len(matched) * self.block_tokens, prompt_tokens)
        self.hits_tokens += cached
        self.lookups_tokens += prompt_tokens
        return cached

    def insert(self, messages: Iterable[tuple[str, str]]) -> None:
        """Record the full blocks of a prompt whose prefill completed."""
        if self.capacity_tokens < self.block_tokens:
            return
        chain = list(self._chain(serialize_messages(messages)))
        # keep a prompt's leading blocks only: a block is useless without its prefix
        chain = chain[: self.capacity_tokens // self.block_tokens]
        for h in chain:
            self._blocks[h] = None
        self._touch(chain)
        while self.size_tokens > self.capacity_tokens:
            self._blocks.popitem(last=False)

    def _touch(self, chain: list[bytes]) -> None:
        """Mark a chain recently used, its first block most recently.

        Eviction then takes a chain's last blocks before its first ones (as
        vLLM evicts leaves first), so what survives is still a usable prefix.
        """
        for h in reversed(chain):
            self._blocks.move_to_end(h)
