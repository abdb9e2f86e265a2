"""Structured evidence with provenance: what a local call returns.

Local (map) calls do not judge; they report facts, signals and candidate
explanations, each pointing back to where it was seen (file and line, byte
offset in a log, trace and span). Reducers then order, group and dedupe
them into a digest that the application's judgment call reads.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal, TypeVar

__all__ = ["EVIDENCE_SCHEMA", "Evidence", "EvidenceKind", "Provenance", "parse_evidence"]

EvidenceKind = Literal["fact", "signal", "candidate"]
_KINDS: tuple[EvidenceKind, ...] = ("fact", "signal", "candidate")


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a piece of evidence was seen; every field is optional."""

    source: str = ""  # file or log path
    line: int | None = None
    byte_offset: int | None = None
    trace_id: str | None = None
    span_id: str | None = None
    service: str | None = None
    timestamp: float | None = None

    def label(self) -> str:
        bits = [self.source + (f":{self.line}" if self.line is not None else "")]
        if self.byte_offset is not None:
            bits.append(f"@{self.byte_offset}")
        if self.trace_id:
            bits.append(f"trace={self.trace_id}")
        if self.span_id:
            bits.append(f"span={self.span_id}")
        if self.service:
            bits.append(f"svc={self.service}")
        return " ".join(b for b in bits if b)


@dataclass(frozen=True, slots=True)
class Evidence:
    """``support`` counts how many local calls reported the same thing."""

    kind: EvidenceKind
    text: str
    provenance: Provenance = Provenance()
    confidence: float = 1.0
    support: int = 1


# The answer shape local calls are asked for (structured output).
EVIDENCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["items"],
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["kind", "text"],
                "properties": {
                    "kind": {"type": "string", "enum": list(_KINDS)},
                    "text": {"type": "string"},
                    "line": {"type": "integer"},
                    "timestamp": {"type": "number"},
                    "trace_id": {"type": "string"},
                    "span_id": {"type": "string"},
                    "service": {"type": "string"},
                    "confidence": {"type": "number"},
                },
            },
        }
    },
}


_Field = TypeVar("_Field", int, float, str)
_T = TypeVar("_T")


def _opt(v: object, kind: type[_Field]) -> _Field | None:
    """``v`` if it is a ``kind`` (an int is a float too; a bool is neither), else None."""
    if kind is float and isinstance(v, int | float) and not isinstance(v, bool):
        return kind(v)
    return v if isinstance(v, kind) and not isinstance(v, bool) else None


def _or(given: _T | None, kept: _T | None) -> _T | None:
    return kept if given is None else given


def parse_evidence(answer: object, base: Provenance = Provenance()) -> list[Evidence]:
    """Evidence from a local call's parsed JSON answer (:data:`EVIDENCE_SCHEMA`).

    ``base`` is the provenance of the chunk the call read; fields the model
    gave (line, span, timestamp…) refine it. Malformed entries are dropped,
    not guessed at: a model's slip must not become a fact.
    """
    items = answer.get("items") if isinstance(answer, dict) else answer
    out: list[Evidence] = []
    for raw in items if isinstance(items, list) else []:
        if not isinstance(raw, dict) or raw.get("kind") not in _KINDS:
            continue
        text = raw.get("text")
        if not isinstance(text, str) or not text.strip():
            continue
        seen = replace(  # the fields the model gave refine the chunk's
            base,
            line=_or(_opt(raw.get("line"), int), base.line),
            timestamp=_or(_opt(raw.get("timestamp"), float), base.timestamp),
            trace_id=_or(_opt(raw.get("trace_id"), str), base.trace_id),
            span_id=_or(_opt(raw.get("span_id"), str), base.span_id),
            service=_or(_opt(raw.get("service"), str), base.service),
        )
        conf = _opt(raw.get("confidence"), float)
        out.append(
            Evidence(
                raw["kind"],
                text.strip(),
                seen,
                1.0 if conf is None else max(0.0, min(1.0, conf)),
            )
        )
    return out
