"""Evidence parsing and reducers."""

from __future__ import annotations

from agentrt.evidence import (
    Evidence,
    Provenance,
    dedupe,
    digest,
    group_by_trace,
    parse_evidence,
    split_by_service,
)


def test_parse_keeps_provenance_and_drops_malformed_entries() -> None:
    base = Provenance(source="app.log", byte_offset=4096)
    answer = {
        "items": [
            {
                "kind": "signal",
                "text": "timeout to db",
                "line": 12,
                "timestamp": 5,
                "service": "api",
            },
            {"kind": "guess", "text": "not a kind"},
            {"kind": "fact", "text": "   "},
            "junk",
            {"kind": "candidate", "text": "pool exhausted", "confidence": 7},
        ]
    }
    ev = parse_evidence(answer, base)
    assert [e.kind for e in ev] == ["signal", "candidate"]
    assert ev[0].provenance == Provenance("app.log", 12, 4096, None, None, "api", 5.0)
    assert ev[1].confidence == 1.0 and ev[1].provenance == base


def _e(text: str, ts: float | None, svc: str = "api", trace: str | None = None) -> Evidence:
    return Evidence("signal", text, Provenance("l", timestamp=ts, service=svc, trace_id=trace))


def test_reducers_dedupe_order_group_and_split() -> None:
    items = [
        _e("db timeout after 30s on conn 7", 9.0, trace="t1"),
        _e("cache miss", 2.0, "cache", trace="t2"),
        _e("DB  timeout after 31s on conn 9", 4.0, trace="t1"),
        _e("no timestamp", None),
    ]
    d = digest(items)
    assert d.dropped == 1
    assert [e.text for e in d.items] == [
        "cache miss",
        "DB  timeout after 31s on conn 9",
        "no timestamp",
    ]
    assert d.items[1].support == 2  # the earliest copy kept, support summed
    assert set(split_by_service(d.items)) == {"api", "cache"}
    assert set(group_by_trace(d.items)) == {"t1", "t2", None}
    assert "[1] signal x2: DB" in d.render()
    assert len(dedupe(items)) == 3
