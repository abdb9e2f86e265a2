"""OTLP JSON traces: grouped by trace, services from the resource, errors clear."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from fixbugs.errors import InputError
from fixbugs.inputs import load_traces

T1 = "4bf92f3577b34da6a3ce929d0e0e4736"
T2 = "0af7651916cd43dd8448eb211c80319c"


def _span(trace: str, span: str, name: str, start: int, **extra: Any) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": span,
        "name": name,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 5_000_000),
        **extra,
    }


def _export(service: str, spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": service}}]
                },
                "scopeSpans": [{"scope": {"name": "s"}, "spans": spans}],
            }
        ]
    }


def test_spans_grouped_by_trace_with_services(tmp_path: Path) -> None:
    front = _export(
        "frontend",
        [
            _span(T1, "a1", "GET /checkout", 100),
            _span(T2, "b1", "GET /health", 50),
        ],
    )
    back = _export(
        "payments",
        [
            _span(
                T1,
                "a2",
                "charge",
                200,
                parentSpanId="a1",
                status={"code": 2, "message": "card declined"},
                attributes=[
                    {"key": "http.status_code", "value": {"intValue": "502"}},
                    {"key": "retry", "value": {"boolValue": True}},
                ],
                events=[
                    {
                        "name": "exception",
                        "timeUnixNano": "210",
                        "attributes": [
                            {"key": "exception.type", "value": {"stringValue": "ValueError"}}
                        ],
                    }
                ],
            )
        ],
    )
    p = tmp_path / "traces.json"
    p.write_text("\n".join(json.dumps(d) for d in (front, back)))  # JSON lines
    traces = load_traces(p)
    assert [t.trace_id for t in traces] == [T2, T1]
    checkout = traces[1]
    assert checkout.services == ("frontend", "payments")
    root, charge = checkout.spans
    assert root.parent_span_id is None and charge.parent_span_id == "a1"
    assert (charge.service, charge.status_code, charge.status_message) == (
        "payments",
        "ERROR",
        "card declined",
    )
    assert charge.attributes == {"http.status_code": 502, "retry": True}
    assert charge.events[0].attributes["exception.type"] == "ValueError"
    assert checkout.errors == (charge,)
    assert charge.duration_ms == 5.0


def test_base64_ids_and_string_status(tmp_path: Path) -> None:
    tid = base64.b64encode(bytes.fromhex(T1)).decode()
    p = tmp_path / "t.json"
    p.write_text(
        json.dumps(
            _export("svc", [_span(tid, "AAAAAAAAAAE=", "x", 1, status={"code": "STATUS_CODE_OK"})])
        )
    )
    (trace,) = load_traces(p)
    assert trace.trace_id == T1 and trace.spans[0].span_id == "0000000000000001"
    assert trace.spans[0].status_code == "OK"


def test_truncated_json_names_file_and_position(tmp_path: Path) -> None:
    p = tmp_path / "cut.json"
    text = json.dumps(_export("svc", [_span(T1, "a", "x", 1)]), indent=1)
    p.write_text(text[: len(text) // 2])
    with pytest.raises(
        InputError, match=r"cut\.json is not valid JSON at line \d+, column \d+"
    ) as info:
        load_traces(p)
    assert "truncated" in str(info.value) and "\n" not in str(info.value)
