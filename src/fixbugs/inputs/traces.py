"""Distributed traces in OTLP JSON, grouped by trace.

OTLP JSON (what the OpenTelemetry collector's file exporter writes, and
what ``/v1/traces`` accepts) nests spans under resources (which carry
``service.name``) and scopes. :func:`load_traces` flattens that into
:class:`Trace` objects, each holding its spans with their service. A file
may hold one export object or one per line (JSON lines).

A trace file is hostile input: its JSON is parsed within bounds
(:mod:`~fixbugs.inputs.boundedjson`: depth, number length, finiteness),
an element of the wrong type (a list where a span should be) is skipped,
and a number field (a timestamp, ``intValue``, ``doubleValue``) that is no
finite number of at most 100 characters refuses the file with
:class:`~fixbugs.inputs.boundedjson.JsonLimit`, which a run turns into a
note (the file dropped, the run going on).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixbugs.errors import InputError
from fixbugs.inputs.boundedjson import MAX_NUMBER_CHARS, JsonLimit, loads
from fixbugs.inputs.textfile import looks_binary, require_file

__all__ = ["Span", "SpanEvent", "Trace", "load_traces", "parse_otlp"]

MAX_TRACE_BYTES = 256_000_000
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}
_INTEGER = re.compile(r"-?[0-9]+")


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
    try:
        traces = parse_otlp(docs)
    except _BadNumber as e:
        raise JsonLimit(f"trace file {p}: {e}") from None
    if not traces and not any(isinstance(d, dict) and "resourceSpans" in d for d in docs):
        raise InputError(
            f"trace file {p} has no 'resourceSpans'; give OTLP JSON "
            "(the collector's file exporter or a /v1/traces body)"
        )
    return traces


def _documents(p: Path, text: str) -> list[Any]:
    what = f"trace file {p}"
    try:
        return [loads(text, what)]
    except json.JSONDecodeError as whole:
        if whole.msg != "Extra data":
            raise _position_error(p, whole) from whole
    docs = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                docs.append(loads(line, f"{what} (line {n})"))
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


class _BadNumber(ValueError):
    """A span's number field that is no bounded, finite number."""


def _obj(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a JSON object, else an empty one (a field of the wrong type)."""
    return value if isinstance(value, dict) else {}


def _objs(value: Any) -> list[Mapping[str, Any]]:
    """The objects in ``value`` if it is a JSON array (other items are skipped)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _int(value: Any, field: str) -> int:
    """An OTLP integer: a JSON number or, in the protobuf JSON mapping, a string of one."""
    if value is None or value == "":
        return 0
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _BadNumber(f"{field} is not an integer")
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_NUMBER_CHARS or not _INTEGER.fullmatch(text):
            raise _BadNumber(f"{field} is not an integer of at most {MAX_NUMBER_CHARS} digits")
        return int(text)
    return value


def _float(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _BadNumber(f"{field} is not a number")
    if isinstance(value, str) and len(value) > MAX_NUMBER_CHARS:
        raise _BadNumber(f"{field} is over {MAX_NUMBER_CHARS} characters")
    try:
        number = float(value)
    except ValueError:
        raise _BadNumber(f"{field} is not a number") from None
    if not math.isfinite(number):
        raise _BadNumber(f"{field} is not finite")
    return number


def parse_otlp(docs: Iterable[Any]) -> list[Trace]:
    """Group the spans of OTLP JSON documents by trace id, each sorted by start time."""
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for doc in docs:
        for resource_spans in _objs(_obj(doc).get("resourceSpans")):
            resource = _attributes(_obj(resource_spans.get("resource")).get("attributes"))
            service = resource.get("service.name")
            scopes = resource_spans.get("scopeSpans") or resource_spans.get(
                "instrumentationLibrarySpans"
            )
            for scope in _objs(scopes):
                for raw in _objs(scope.get("spans")):
                    trace_id, span = _span(raw, service)
                    by_trace[trace_id].append(span)
    return [
        Trace(trace_id, tuple(sorted(spans, key=lambda s: (s.start_ns, s.span_id))))
        for trace_id, spans in sorted(by_trace.items(), key=lambda kv: _first_start(kv[1]))
    ]


def _first_start(spans: list[Span]) -> int:
    return min(s.start_ns for s in spans)


def _span(raw: Mapping[str, Any], service: Any) -> tuple[str, Span]:
    status = _obj(raw.get("status"))
    code = status.get("code", 0)
    if isinstance(code, str) and not _INTEGER.fullmatch(code.strip()):
        code_name = code[:40].removeprefix("STATUS_CODE_").upper()
    else:
        code_name = _STATUS.get(_int(code, "status code"), "UNSET")
    parent = _id(raw.get("parentSpanId"))
    events = tuple(
        SpanEvent(
            name=str(e.get("name", "")),
            time_ns=_int(e.get("timeUnixNano"), "an event's timeUnixNano"),
            attributes=_attributes(e.get("attributes")),
        )
        for e in _objs(raw.get("events"))
    )
    span = Span(
        span_id=_id(raw.get("spanId")) or "",
        parent_span_id=parent or None,
        name=str(raw.get("name", "")),
        service=str(service) if service is not None else None,
        start_ns=_int(raw.get("startTimeUnixNano"), "startTimeUnixNano"),
        end_ns=_int(raw.get("endTimeUnixNano"), "endTimeUnixNano"),
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
    return {str(kv.get("key")): _value(kv.get("value")) for kv in _objs(items) if "key" in kv}


def _value(v: Any) -> Any:
    if not isinstance(v, dict):
        return v
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        return _int(v["intValue"], "an intValue")
    if "doubleValue" in v:
        return _float(v["doubleValue"], "a doubleValue")
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        values = _obj(v["arrayValue"]).get("values")
        return [_value(x) for x in values] if isinstance(values, list) else []
    if "kvlistValue" in v:
        return _attributes(_obj(v["kvlistValue"]).get("values"))
    if "bytesValue" in v:
        return v["bytesValue"]
    return None
