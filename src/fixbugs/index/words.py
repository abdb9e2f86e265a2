"""Code as words: identifiers split at ``_`` and camelCase humps, for BM25.

``parse_state`` is searched as ``parse_state``, ``parse`` and ``state``;
``HTTPServer`` as ``httpserver``, ``http`` and ``server``. Stop words and
one-letter pieces are dropped: they match everything.
"""

from __future__ import annotations

import re

from fixbugs.inputs import pieces as bounded

__all__ = ["STOP_WORDS", "tokenize_code"]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOP_TEXT = (
    "the a an and or of to in is it for on with as be by this that not are was from at if "
    "else def return self none true false import class assert test tests py lambda pass"
)
STOP_WORDS = frozenset(_STOP_TEXT.split())
_MEMO_MAX = 200_000  # identifiers remembered (a repository repeats its names)
_memo: dict[str, tuple[str, ...]] = {}


def _split(word: str) -> tuple[str, ...]:
    """The words one identifier stands for (the whole, lower-cased, then its pieces)."""
    low = word.lower()
    pieces = [p.lower() for part in word.split("_") for p in _CAMEL.findall(part)]
    out = [low] if len(pieces) > 1 and low not in STOP_WORDS else []
    out.extend(p for p in pieces if len(p) > 1 and p not in STOP_WORDS)
    return tuple(out)


def tokenize_code(text: str) -> list[str]:
    """Lower-case words, with identifiers also split at ``_`` and camelCase humps."""
    out: list[str] = []
    memo = _memo
    for word in bounded.findall(_WORD, text):
        got = memo.get(word)
        if got is None:
            got = _split(word)
            if len(memo) < _MEMO_MAX:
                memo[word] = got
        out.extend(got)
    return out
