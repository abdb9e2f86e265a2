"""A long untrusted text in bounded pieces, for regular expressions that read it whole.

Python's ``re`` holds the GIL for the whole of one ``search``/``findall``
call: run over a 5 MB report in a worker thread, one such call still stops
the service's event loop for the call's duration (a second, for some
patterns). The parsers run off the loop (:func:`asyncio.to_thread`), so what
bounds the loop's wait is the longest single call: :func:`pieces` cuts a
text into runs of whole lines of at most :data:`PIECE_CHARS` characters, and
:func:`findall`, :func:`finditer` and :func:`search` run a pattern piece by
piece; :func:`squeeze` collapses whitespace the same way.

For a pattern that never matches across a line break the result is the
same as on the whole text (pieces begin at a line's start, so ``^`` under
``re.M`` and ``\\b`` hold there). Only a line longer than a piece is cut
inside, after its last space in the piece where it has one: a match that
straddles that cut is not found, which costs nothing a report's evidence
needs (no useful token is 64 K characters long).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["PIECE_CHARS", "findall", "finditer", "pieces", "search", "squeeze"]

PIECE_CHARS = 1 << 16  # a linear pattern reads this in well under a millisecond


def pieces(text: str, width: int = PIECE_CHARS) -> Iterator[str]:
    """``text`` as consecutive pieces of at most ``width`` characters, cut after a line
    break (in a longer line: after a space, else anywhere); joined, they are ``text``."""
    n = len(text)
    if n <= width:
        yield text
        return
    start = 0
    while start < n:
        end = min(n, start + width)
        if end < n:
            cut = text.rfind("\n", start, end)
            if cut < start:
                cut = text.rfind(" ", start, end)
            if cut >= start:
                end = cut + 1
        yield text[start:end]
        start = end


def findall(pattern: re.Pattern[str], text: str) -> list[str]:
    """``pattern.findall(text)``, piece by piece (a pattern of at most one group)."""
    out: list[str] = []
    for piece in pieces(text):
        out.extend(pattern.findall(piece))
    return out


def finditer(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text)``, piece by piece (a match's offsets are its piece's)."""
    for piece in pieces(text):
        yield from pattern.finditer(piece)


def search(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match of ``pattern`` in ``text``, piece by piece (offsets are its piece's)."""
    for piece in pieces(text):
        m = pattern.search(piece)
        if m is not None:
            return m
    return None


def squeeze(text: str) -> str:
    """``text`` with each run of whitespace one space and none at either end (as
    ``" ".join(text.split())``), piece by piece."""
    return " ".join(filter(None, (" ".join(p.split()) for p in pieces(text))))
