"""Traces chunked by trace and span.

A trace is the unit of causality (one request through every service), so
whole traces are packed into chunks under a token budget. A trace too large
for one chunk is split along its span tree: a subtree (a span with all its
descendants) stays together when it fits, otherwise it is split into its
children's subtrees, recursively; a lone span larger than the budget gets a
chunk of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agentrt.chunking.packing import pack_greedy
from agentrt.tokens.counting import estimate_tokens

__all__ = ["Span", "TraceChunk", "chunk_traces"]


@dataclass(frozen=True, slots=True)
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    service: str
    name: str
    start: float
    end: float
    attributes: dict[str, Any] = field(default_factory=dict)

    def render(self) -> str:
        attrs = " ".join(f"{k}={v}" for k, v in self.attributes.items())
        return (
            f"[{self.start:.6f}+{(self.end - self.start) * 1000:.1f}ms] trace={self.trace_id} "
            f"span={self.span_id} parent={self.parent_id or '-'} {self.service}:{self.name} {attrs}"
        ).rstrip()


@dataclass(frozen=True, slots=True)
class TraceChunk:
    spans: tuple[Span, ...]
    tokens: int

    @property
    def trace_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.trace_id for s in self.spans))

    def render(self) -> str:
        return "\n".join(s.render() for s in self.spans)


def _subtree_units(spans: list[Span], budget: int, size: Callable[[Span], int]) -> list[list[Span]]:
    """Split one trace's spans into depth-first units that fit the budget where possible."""
    ids = {s.span_id for s in spans}
    children: dict[str | None, list[Span]] = {}
    for s in spans:
        parent = s.parent_id if s.parent_id in ids else None  # orphans hang off the root
        children.setdefault(parent, []).append(s)
    for kids in children.values():
        kids.sort(key=lambda s: (s.start, s.span_id))

    def flat(s: Span) -> list[Span]:
        out = [s]
        for c in children.get(s.span_id, []):
            out.extend(flat(c))
        return out

    def units(s: Span) -> list[list[Span]]:
        whole = flat(s)
        if sum(size(x) for x in whole) <= budget or not children.get(s.span_id):
            return [whole]
        result: list[list[Span]] = [[s]]
        for c in children.get(s.span_id, []):
            result.extend(units(c))
        return result

    out: list[list[Span]] = []
    for root in children.get(None, []):
        out.extend(units(root))
    return out


def chunk_traces(
    spans: Iterable[Span], budget: int, *, count: Callable[[str], int] = estimate_tokens
) -> list[TraceChunk]:
    """Chunks of whole traces (or whole subtrees of a large trace) under ``budget``."""

    def size(s: Span) -> int:
        return count(s.render()) + 1

    traces: dict[str, list[Span]] = {}
    for s in spans:
        traces.setdefault(s.trace_id, []).append(s)
    units: list[list[Span]] = []
    for trace in traces.values():
        if sum(size(s) for s in trace) <= budget:
            units.append(sorted(trace, key=lambda s: (s.start, s.span_id)))
        else:
            units.extend(_subtree_units(trace, budget, size))
    sizes = [sum(size(s) for s in u) for u in units]
    chunks = []
    for g in pack_greedy(sizes, budget):
        members = [s for u in units[g.start : g.stop] for s in u]
        chunks.append(TraceChunk(tuple(members), sum(sizes[g.start : g.stop])))
    return chunks
