"""Logs chunked greedily by whole lines under a token budget, read as a stream.

A multi-gigabyte log is never loaded whole: the reader holds one read
buffer (a few MB) and finds chunk ends with ``bytes.rfind`` on it, so the
work per chunk is a handful of C calls, not a Python loop per line. Token
counts use the project's estimate (four UTF-8 bytes per token), which on
bytes is exact arithmetic: a chunk of at most ``4 × budget`` bytes is at most
``budget`` tokens. A single line longer than the budget is the one thing
split mid-line (at a UTF-8 character boundary), marked ``partial``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from agentrt.tokens._counting import CHARS_PER_TOKEN

__all__ = ["LogChunk", "chunk_log", "chunk_log_file"]


@dataclass(frozen=True, slots=True)
class LogChunk:
    """Lines ``first_line``..``last_line`` (1-based) starting at ``byte_offset``.

    Provenance for evidence: a finding in this chunk points back to the file
    by line and byte offset.
    """

    source: str
    index: int
    first_line: int
    last_line: int
    byte_offset: int
    data: bytes
    partial: bool = False  # ends inside a line longer than the budget

    @property
    def tokens(self) -> int:
        return math.ceil(len(self.data) / CHARS_PER_TOKEN)

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


def chunk_log(
    stream: BinaryIO, budget: int, *, source: str = "", read_size: int = 4 << 20
) -> Iterator[LogChunk]:
    """Chunks of whole lines, each at most ``budget`` estimated tokens."""
    if budget < 1:
        raise ValueError("budget must be at least 1 token")
    max_bytes = budget * CHARS_PER_TOKEN
    buf = b""
    pos = 0  # invariant: buf[pos:] is the unread tail; it starts at file offset `offset`
    offset = 0
    line = 1
    index = 0
    eof = False
    while True:
        if len(buf) - pos < max_bytes and not eof:
            more = stream.read(max(read_size, max_bytes))
            eof = not more
            buf = buf[pos:] + more
            pos = 0
            continue
        if pos >= len(buf):
            return
        limit = pos + max_bytes
        partial = False
        if eof and limit >= len(buf):
            end = len(buf)  # the rest fits
        else:
            nl = buf.rfind(b"\n", pos, limit)
            if nl >= 0:
                end = nl + 1
            else:
                end = limit
                while end > pos + 1 and (buf[end] & 0xC0) == 0x80:
                    end -= 1  # do not cut a UTF-8 character in two
                partial = True
        data = buf[pos:end]
        newlines = data.count(b"\n")
        last = line + newlines - (1 if data.endswith(b"\n") else 0)
        yield LogChunk(source, index, line, max(line, last), offset, data, partial)
        index += 1
        line += newlines
        offset += end - pos
        pos = end


def chunk_log_file(path: str | Path, budget: int, **kw: int) -> Iterator[LogChunk]:
    """:func:`chunk_log` over a file, opened and closed here."""
    with open(path, "rb") as f:
        yield from chunk_log(f, budget, source=str(path), **kw)
