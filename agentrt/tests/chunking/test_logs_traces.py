"""Log chunking as a stream, and trace chunking by trace and span."""

from __future__ import annotations

import io
import itertools

from agentrt.chunking import Span, chunk_log, chunk_traces


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


def _span(t: str, s: str, p: str | None, start: float, svc: str = "api") -> Span:
    return Span(t, s, p, svc, f"op-{s}", start, start + 0.01, {"k": "v" * 20})


def test_whole_traces_are_packed_and_a_large_trace_splits_by_subtree() -> None:
    spans = [_span("t1", "a", None, 0.0), _span("t1", "b", "a", 0.1), _span("t2", "c", None, 0.0)]
    chunks = chunk_traces(spans, budget=1000)
    assert len(chunks) == 1 and chunks[0].trace_ids == ("t1", "t2")
    big = [_span("t3", "root", None, 0.0)]
    for i in range(3):
        big.append(_span("t3", f"c{i}", "root", i + 1.0, svc=f"s{i}"))
        big += [_span("t3", f"c{i}g{j}", f"c{i}", i + 1.1 + j / 10) for j in range(3)]
    per_span = chunk_traces(big[:1], budget=10_000)[0].tokens
    chunks = chunk_traces(big, budget=per_span * 5)
    assert len(chunks) > 1 and all(c.tokens <= per_span * 5 for c in chunks)
    # each child subtree (child + its grandchildren) stays in one chunk
    for i in range(3):
        holders = [k for k, c in enumerate(chunks) if any(f"c{i}" in s.span_id for s in c.spans)]
        assert len(set(holders)) == 1
    assert sorted(s.span_id for c in chunks for s in c.spans) == sorted(s.span_id for s in big)
