"""Logs: streamed, per-line format detection, binary refused, giant lines capped."""

from __future__ import annotations

import gzip
import json
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fixbugs.errors import InputError
from fixbugs.inputs import check_log, iter_log_records, parse_line


def test_mixed_formats_in_one_file(tmp_path: Path) -> None:
    p = tmp_path / "app.log"
    lines = [
        json.dumps(
            {
                "ts": "2024-05-01T10:00:00.250Z",
                "level": "error",
                "service": {"name": "checkout"},
                "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
                "span_id": "00f067aa0ba902b7",
                "msg": "payment failed",
            }
        ),
        'time=2024-05-01T10:00:01Z level=warn service=cart msg="retrying call" attempt=2',
        "2024-05-01 10:00:02,125 ERROR [worker] boom trace_id=4bf92f3577b34da6a3ce929d0e0e4736",
        "",
        "Traceback (most recent call last):",
    ]
    p.write_text("\n".join(lines) + "\n")
    recs = list(iter_log_records(p))
    assert [r.format for r in recs] == ["json", "logfmt", "text", "text"]
    j, lf, txt, tb = recs
    assert j.timestamp == datetime(2024, 5, 1, 10, 0, 0, 250000, tzinfo=UTC)
    assert (j.level, j.service, j.message) == ("ERROR", "checkout", "payment failed")
    assert (j.trace_id, j.span_id) == ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
    assert (lf.level, lf.service, lf.message) == ("WARNING", "cart", "retrying call")
    assert txt.level == "ERROR" and txt.trace_id == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert txt.timestamp == datetime(2024, 5, 1, 10, 0, 2, 125000)
    assert tb.line_no == 5 and tb.timestamp is None and tb.level is None
    assert tb.byte_offset == sum(len(line) + 1 for line in lines[:4])


def test_epoch_timestamps_in_any_unit() -> None:
    for value in (1714557600, 1714557600000, 1714557600000000000):
        rec = parse_line(json.dumps({"timestamp": value, "message": "m"}))
        assert rec.timestamp == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def test_gzip_logs_are_streamed(tmp_path: Path) -> None:
    p = tmp_path / "app.log.gz"
    with gzip.open(p, "wt") as f:
        f.write("INFO start\nERROR stop\n")
    assert [r.level for r in iter_log_records(p)] == ["INFO", "ERROR"]


def test_binary_log_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "core.dump"
    p.write_bytes(bytes(range(256)) * 64)
    with pytest.raises(InputError, match=r"core\.dump is binary, not a text log") as info:
        list(iter_log_records(p))
    assert "\n" not in str(info.value)


def test_empty_log_is_skipped_with_a_note(tmp_path: Path) -> None:
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    assert check_log(p) == (p, f"log {p} is empty; skipped")
    assert list(iter_log_records(p)) == []


def test_a_50_mb_single_line_is_capped_and_noted_without_loading_it(tmp_path: Path) -> None:
    p = tmp_path / "one-line.log"
    size = 50 * 1024 * 1024
    with p.open("wb") as f:
        f.write(b"ERROR " + b"x" * (size - 6) + b"\n")
        f.write(b"INFO after\n")
    tracemalloc.start()
    try:
        recs = list(iter_log_records(p, max_line_bytes=65_536))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024  # the line is 50 MB; we held at most a few chunks
    big, after = recs
    assert len(big.raw) == 65_536 and big.truncated_bytes == size - 65_536
    assert big.level == "ERROR"
    assert big.note is not None and "bytes dropped" in big.note
    assert (after.line_no, after.message, after.byte_offset) == (2, "INFO after", size + 1)
    assert after.note is None


def test_truncated_json_line_falls_back_to_text() -> None:
    rec = parse_line('{"level": "error", "msg": "cut of')
    assert rec.format == "text" and rec.level == "ERROR"
