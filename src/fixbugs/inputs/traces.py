"""Distributed traces in OTLP JSON, grouped by trace.

OTLP JSON (what the OpenTelemetry collector's file exporter writes, and
what ``/v1/traces`` accepts) nests spans under resources (which carry
``service.name``) and scopes. :func:`load_traces` flattens that into
:class:`Trace` objects, each holding its spans with their service. A file
may hold one export object or one per line (JSON lines).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixbugs.errors import InputError
from fixbugs.inputs.textfile import looks_binary, require_file

__all__ = ["Span", "SpanEvent", "Trace", "load_traces", "parse_otlp"]

MAX_TRACE_BYTES = 256_000_000
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


@dataclass(frozen=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Span:
    span_id: str
    parent_span_id: str | None
    name: str
    service: str | None
    start_ns: int
    end_ns: int
    status_code: str
    status_message: str
    attributes: Mapping[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()

    @property
    def duration_ms(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e6

    @property
    def is_error(self) -> bool:
        return self.status_code == "ERROR"


@dataclass(frozen=True)
class Trace:
    trace_id: str
    spans: tuple[Span, ...]

    @property
    def services(self) -> tuple[str, ...]:
        return tuple(sorted({s.service for s in self.spans if s.service}))

    @property
    def errors(self) -> tuple[Span, ...]:
        return tuple(s for s in self.spans if s.is_error)


def load_traces(path: Path) -> list[Trace]:
    """Read an OTLP JSON file; invalid or truncated JSON is an InputError with its position."""
    p = require_file(path, "trace file")
    size = p.stat().st_size
    if size > MAX_TRACE_BYTES:
        raise InputError(f"trace file {p} is {size} bytes (limit {MAX_TRACE_BYTES}); pass fewer")
    data = p.read_bytes()
    if looks_binary(data[:8192]):
        raise InputError(f"trace file {p} is binary; give OTLP JSON (not protobuf)")
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    if not text.strip():
        raise InputError(f"trace file {p} is empty; give an OTLP JSON export")
    docs = _documents(p, text)
    traces = parse_otlp(docs)
    if not traces and not any(isinstance(d, dict) and "resourceSpans" in d for d in docs):
        raise InputError(
            f"trace file {p} has no 'resourceSpans'; give OTLP JSON "
            "(the collector's file exporter or a /v1/traces body)"
        )
    return traces


def _documents(p: Path, text: str) -> list[Any]:
    try:
        return [json.loads(text)]
    except json.JSONDecodeError as whole:
        if whole.msg != "Extra data":
            raise _position_error(p, whole) from whole
    docs = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                docs.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise _position_error(p, e, line_no=n) from e
    return docs


def _position_error(p: Path, e: json.JSONDecodeError, line_no: int | None = None) -> InputError:
    line = line_no if line_no is not None else e.lineno
    truncated = e.pos >= len(e.doc.rstrip()) - 1
    hint = "the file looks truncated" if truncated else "fix the JSON"
    return InputError(
        f"trace file {p} is not valid JSON at line {line}, column {e.colno} ({e.msg}); {hint}"
    )


def parse_otlp(docs: Iterable[Any]) -> list[Trace]:
    """Group the spans of OTLP JSON documents by trace id, each sorted by start time."""
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        for resource_spans in doc.get("resourceSpans") or []:
            resource = _attributes((resource_spans.get("resource") or {}).get("attributes"))
            service = resource.get("service.name")
            scopes = resource_spans.get("scopeSpans") or resource_spans.get(
                "instrumentationLibrarySpans"
            )
            for scope in scopes or []:
                for raw in scope.get("spans") or []:
                    trace_id, span = _span(raw, service)
                    by_trace[trace_id].append(span)
    return [
        Trace(trace_id, tuple(sorted(spans, key=lambda s: (s.start_ns, s.span_id))))
        for trace_id, spans in sorted(by_trace.items(), key=lambda kv: _first_start(kv[1]))
    ]


def _first_start(spans: list[Span]) -> int:
    return min(s.start_ns for s in spans)


def _span(raw: Mapping[str, Any], service: Any) -> tuple[str, Span]:
    status = raw.get("status") or {}
    code = status.get("code", 0)
    if isinstance(code, str):
        code_name = code.removeprefix("STATUS_CODE_").upper()
    else:
        code_name = _STATUS.get(int(code), "UNSET")
    parent = _id(raw.get("parentSpanId"))
    events = tuple(
        SpanEvent(
            name=str(e.get("name", "")),
            time_ns=int(e.get("timeUnixNano") or 0),
            attributes=_attributes(e.get("attributes")),
        )
        for e in raw.get("events") or []
    )
    span = Span(
        span_id=_id(raw.get("spanId")) or "",
        parent_span_id=parent or None,
        name=str(raw.get("name", "")),
        service=str(service) if service is not None else None,
        start_ns=int(raw.get("startTimeUnixNano") or 0),
        end_ns=int(raw.get("endTimeUnixNano") or 0),
        status_code=code_name,
        status_message=str(status.get("message", "")),
        attributes=_attributes(raw.get("attributes")),
        events=events,
    )
    return _id(raw.get("traceId")) or "", span


def _id(value: Any) -> str | None:
    """OTLP JSON ids are hex; the protobuf JSON mapping writes them base64."""
    if not value:
        return None
    text = str(value)
    try:
        int(text, 16)
        return text.lower()
    except ValueError:
        pass
    try:
        return base64.b64decode(text, validate=True).hex()
    except (binascii.Error, ValueError):
        return text


def _attributes(items: Any) -> dict[str, Any]:
    if not isinstance(items, list):
        return {}
    return {
        str(kv.get("key")): _value(kv.get("value"))
        for kv in items
        if isinstance(kv, dict) and "key" in kv
    }


def _value(v: Any) -> Any:
    if not isinstance(v, dict):
        return v
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return int(v["intValue"])
    if "doubleValue" in v:
        return float(v["doubleValue"])
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [_value(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return _attributes((v["kvlistValue"] or {}).get("values"))
    if "bytesValue" in v:
        return v["bytesValue"]
    return None
