"""Log chunking as a stream."""

from __future__ import annotations

import io
import itertools

from agentrt.chunking import chunk_log


def _log(n: int) -> bytes:
    return b"".join(
        f"2024-01-01T00:00:{i:05d} INFO svc request {i} ok\n".encode() for i in range(n)
    )


def test_log_chunks_are_whole_lines_under_budget_with_provenance() -> None:
    data = _log(1000)
    chunks = list(chunk_log(io.BytesIO(data), budget=100, read_size=512))
    assert b"".join(c.data for c in chunks) == data
    assert all(c.tokens <= 100 and c.data.endswith(b"\n") for c in chunks)
    lines = data.splitlines(keepends=True)
    for c in chunks:
        assert c.data == b"".join(lines[c.first_line - 1 : c.last_line])
        assert data[c.byte_offset : c.byte_offset + len(c.data)] == c.data
    # greedy: adding the next line would have exceeded the budget
    for a, b in itertools.pairwise(chunks):
        assert len(a.data) + len(lines[b.first_line - 1]) > 400


def test_a_line_longer_than_the_budget_is_split_at_a_character_boundary() -> None:
    data = b"short\n" + ("é" * 300).encode() + b"\nend\n"
    chunks = list(chunk_log(io.BytesIO(data), budget=50, read_size=64))
    assert b"".join(c.data for c in chunks) == data
    assert any(c.partial for c in chunks)
    assert all("\ufffd" not in c.text for c in chunks)
    assert chunks[-1].last_line == 3
