"""Reducers over evidence: dedupe, order by time, group by trace/span, split by service.

Pure functions: they shrink and arrange what the map calls found so that the
application's judgment call reads each thing once, in causal order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from agentrt.evidence._model import Evidence

__all__ = ["Digest", "dedupe", "digest", "group_by_trace", "order_by_time", "split_by_service"]

_SPACE = re.compile(r"\s+")
_NUMBER = re.compile(r"0x[0-9a-f]+|\d+")


def _key(e: Evidence) -> tuple[str, str]:
    # numbers (ids, ports, counts) vary between repeats of the same finding
    return e.kind, _NUMBER.sub("#", _SPACE.sub(" ", e.text.lower())).strip()


def dedupe(items: Iterable[Evidence]) -> list[Evidence]:
    """One entry per (kind, normalized text): the earliest seen, with summed support
    and the highest confidence."""
    seen: dict[tuple[str, str], Evidence] = {}
    for e in items:
        k = _key(e)
        first = seen.get(k)
        if first is None:
            seen[k] = e
            continue
        earlier = first
        ts_e, ts_f = e.provenance.timestamp, first.provenance.timestamp
        if ts_e is not None and (ts_f is None or ts_e < ts_f):
            earlier = e
        seen[k] = replace(
            earlier,
            support=first.support + e.support,
            confidence=max(first.confidence, e.confidence),
        )
    return list(seen.values())


def order_by_time(items: Iterable[Evidence]) -> list[Evidence]:
    """By timestamp; evidence without one last, by source and line."""
    return sorted(
        items,
        key=lambda e: (
            e.provenance.timestamp is None,
            e.provenance.timestamp or 0.0,
            e.provenance.source,
            e.provenance.line or 0,
        ),
    )


def group_by_trace(items: Iterable[Evidence]) -> dict[str | None, dict[str | None, list[Evidence]]]:
    """trace id → span id → evidence (``None`` keys hold what has no trace/span)."""
    out: dict[str | None, dict[str | None, list[Evidence]]] = {}
    for e in items:
        out.setdefault(e.provenance.trace_id, {}).setdefault(e.provenance.span_id, []).append(e)
    return out


def split_by_service(items: Iterable[Evidence]) -> dict[str, list[Evidence]]:
    out: dict[str, list[Evidence]] = {}
    for e in items:
        out.setdefault(e.provenance.service or "unknown", []).append(e)
    return out


@dataclass(frozen=True, slots=True)
class Digest:
    """Deduplicated evidence in time order, with its groupings, ready for judgment."""

    items: tuple[Evidence, ...]
    dropped: int  # duplicates removed

    @property
    def by_service(self) -> dict[str, list[Evidence]]:
        return split_by_service(self.items)

    @property
    def by_trace(self) -> dict[str | None, dict[str | None, list[Evidence]]]:
        return group_by_trace(self.items)

    def render(self) -> str:
        """Numbered lines ``[i] kind (support) text — provenance`` for a prompt."""
        lines = []
        for i, e in enumerate(self.items):
            sup = f" x{e.support}" if e.support > 1 else ""
            lines.append(f"[{i}] {e.kind}{sup}: {e.text} — {e.provenance.label()}")
        return "\n".join(lines)


def digest(items: Sequence[Evidence]) -> Digest:
    kept = order_by_time(dedupe(items))
    return Digest(tuple(kept), len(items) - len(kept))
