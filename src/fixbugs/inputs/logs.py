"""Logs of any size, read as a stream of records.

A log is never loaded whole: :func:`iter_log_records` reads one line at a
time with a byte cap per line, so a 50 MB line costs the cap, not 50 MB
(the rest of the line is skipped in chunks and the record says so). Each
line is parsed on its own as JSON, logfmt or plain text, because real logs
mix them (a JSON service log with a plain-text traceback in between).
Gzip-compressed logs are read through ``gzip``, zip archives member by
member (:mod:`fixbugs.inputs.logsources`, which also walks a folder of
logs); other binary files are refused with a clear error.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

from fixbugs.errors import InputError
from fixbugs.inputs.boundedjson import JsonLimit, loads
from fixbugs.inputs.logsources import STREAM_ERRORS, ZIP_MAGIC, check_zip_logs, open_streams
from fixbugs.inputs.textfile import (
    GZIP_MAGIC,
    SNIFF_BYTES,
    looks_binary_document,
    require_file,
)

__all__ = ["EMPTY", "LogFormat", "LogRecord", "check_log", "iter_log_records", "parse_line"]

LogFormat = Literal["text", "json", "logfmt"]
MAX_LINE_BYTES = 65_536
EMPTY = "is empty; skipped"  # the end of an empty log's note
_SKIP_CHUNK = 1 << 20

_TS_KEYS = ("timestamp", "time", "ts", "@timestamp", "asctime", "datetime", "date")
_LEVEL_KEYS = ("level", "lvl", "severity", "levelname", "log.level", "severity_text")
_SERVICE_KEYS = ("service", "service.name", "service_name", "app", "application", "component")
_TRACE_KEYS = ("trace_id", "traceid", "traceId", "trace.id", "otelTraceID", "dd.trace_id")
_SPAN_KEYS = ("span_id", "spanid", "spanId", "span.id", "otelSpanID", "dd.span_id")
_MSG_KEYS = ("message", "msg", "event", "log", "text", "body")

_LEVELS = {
    "trace": "TRACE", "debug": "DEBUG", "info": "INFO", "information": "INFO",
    "notice": "INFO", "warn": "WARNING", "warning": "WARNING", "error": "ERROR",
    "err": "ERROR", "critical": "CRITICAL", "crit": "CRITICAL", "fatal": "CRITICAL",
    "panic": "CRITICAL", "emerg": "CRITICAL", "alert": "CRITICAL",
}  # fmt: skip
_TEXT_TS = re.compile(
    r"^\[?(?P<ts>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\]?"
)
_TEXT_LEVEL = re.compile(
    r"\b(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|CRITICAL|FATAL|PANIC)\b", re.IGNORECASE
)
_INLINE_ID = re.compile(r"\b(trace_?id|span_?id)[=:]\s*\"?([0-9a-fA-F-]{8,})", re.IGNORECASE)
# keys and quoted values are bounded so a huge line cannot make the search quadratic
_LOGFMT_PAIR = re.compile(r'(?<![\w.@/-])([\w.@/-]{1,64})=("(?:[^"\\\n]|\\.){0,4096}"|\S*)')


@dataclass(frozen=True)
class LogRecord:
    """One line of a log; ``raw`` is the line as read (up to the cap)."""

    line_no: int
    byte_offset: int
    timestamp: datetime | None
    level: str | None
    service: str | None
    trace_id: str | None
    span_id: str | None
    message: str
    raw: str
    format: LogFormat = "text"
    truncated_bytes: int = 0
    source: str | None = None  # a zip member's "logs.zip:app.log"; None: the file itself

    @property
    def note(self) -> str | None:
        """Why this record is incomplete, if it is."""
        if not self.truncated_bytes:
            return None
        return (
            f"line {self.line_no} cut to its first {len(self.raw)} characters "
            f"({self.truncated_bytes} bytes dropped)"
        )


def check_log(path: Path) -> tuple[Path, str | None]:
    """Validate a log without reading it all: the path, and a note if it is empty or
    (a zip) some of its members are not read; an InputError if it is no text log."""
    p = require_file(path, "log")
    with p.open("rb") as f:
        head = f.read(SNIFF_BYTES)
    if not head:
        return p, f"log {p} {EMPTY}"
    if head.startswith(ZIP_MAGIC):
        zipped = check_zip_logs(p)
        if not zipped.members:
            raise InputError(f"log archive {p} holds no text log ({zipped.note or 'it is empty'})")
        return p, f"log archive {p}: {zipped.note}" if zipped.note else None
    if head.startswith(GZIP_MAGIC):
        with gzip.open(p, "rb") as g:
            try:
                head = g.read(SNIFF_BYTES)
            except (OSError, EOFError, zlib.error) as e:
                raise InputError(f"log {p} is a broken gzip file ({e}); decompress it") from e
    if looks_binary_document(head):
        raise InputError(
            f"log {p} is binary, not a text log; give a plain-text, JSON-lines or logfmt log"
        )
    return p, None


def iter_log_records(path: Path, *, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[LogRecord]:
    """Stream the records of a log, one per non-empty line (a zip's members in turn, each
    record naming its member); a stream that breaks ends where it broke."""
    p, _ = check_log(path)
    for source, stream in open_streams(p):
        label = None if source == p.name else source
        try:
            for line_no, (offset, data, dropped) in enumerate(_lines(stream, max_line_bytes), 1):
                text = data.decode("utf-8", errors="replace").rstrip("\r\n")
                if not text.strip():
                    continue
                yield parse_line(
                    text, line_no=line_no, byte_offset=offset, truncated_bytes=dropped, source=label
                )
        except STREAM_ERRORS:
            continue


def _lines(f: IO[bytes], cap: int) -> Iterator[tuple[int, bytes, int]]:
    """(byte offset, first ``cap`` bytes, bytes dropped) for each line."""
    offset = 0
    while True:
        data = f.readline(cap)
        if not data:
            return
        start, dropped = offset, 0
        offset += len(data)
        if len(data) == cap and not data.endswith(b"\n"):
            # skip the rest of an overlong line without holding it
            while rest := f.readline(_SKIP_CHUNK):
                offset += len(rest)
                if rest.endswith(b"\n"):
                    dropped += len(rest) - 1
                    break
                dropped += len(rest)
        yield start, data, dropped


def parse_line(
    text: str,
    *,
    line_no: int = 1,
    byte_offset: int = 0,
    truncated_bytes: int = 0,
    source: str | None = None,
) -> LogRecord:
    """Parse one line as JSON, logfmt or plain text, whichever it is."""
    stripped = text.strip()
    fields: Mapping[str, Any] | None = None
    fmt: LogFormat = "text"
    if stripped.startswith("{"):
        try:
            doc = loads(stripped, "a log line")
        except (ValueError, JsonLimit):  # not JSON, or past its bounds: read as text
            doc = None
        if isinstance(doc, dict):
            fields, fmt = _flatten(doc), "json"
    if fields is None and "=" in stripped:
        pairs = _LOGFMT_PAIR.findall(stripped)
        if len(pairs) >= 2 and sum(len(k) + len(v) + 1 for k, v in pairs) >= 0.6 * len(stripped):
            fields = {k: _unquote(v) for k, v in pairs}
            fmt = "logfmt"
    if fields:
        message = _pick(fields, _MSG_KEYS)
        return LogRecord(
            line_no=line_no,
            byte_offset=byte_offset,
            timestamp=parse_timestamp(_pick(fields, _TS_KEYS)),
            level=_level(_pick(fields, _LEVEL_KEYS)),
            service=_text(_pick(fields, _SERVICE_KEYS)),
            trace_id=_text(_pick(fields, _TRACE_KEYS)),
            span_id=_text(_pick(fields, _SPAN_KEYS)),
            message=str(message) if message is not None else stripped,
            raw=text,
            format=fmt,
            truncated_bytes=truncated_bytes,
            source=source,
        )
    ts_match = _TEXT_TS.match(stripped)
    level_match = _TEXT_LEVEL.search(stripped[:120])
    ids = {k.lower().replace("_", ""): v for k, v in _INLINE_ID.findall(stripped)}
    return LogRecord(
        line_no=line_no,
        byte_offset=byte_offset,
        timestamp=parse_timestamp(ts_match.group("ts")) if ts_match else None,
        level=_level(level_match.group(1)) if level_match else None,
        service=None,
        trace_id=ids.get("traceid"),
        span_id=ids.get("spanid"),
        message=stripped,
        raw=text,
        format="text",
        truncated_bytes=truncated_bytes,
        source=source,
    )


def parse_timestamp(value: Any) -> datetime | None:
    """ISO 8601 text, or epoch seconds / ms / µs / ns; ``None`` if neither."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float) or (isinstance(value, str) and _is_number(value)):
        number = float(value)
        for scale in (1, 1e3, 1e6, 1e9):
            seconds = number / scale
            if seconds < 4e9:  # before the year 2096: the right unit
                try:
                    return datetime.fromtimestamp(seconds, tz=UTC)
                except (OverflowError, OSError, ValueError):
                    return None
        return None
    if not isinstance(value, str):
        return None
    text = value.strip().replace(",", ".")
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _flatten(doc: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in doc.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flatten(value, f"{name}."))
        out[name] = value
    return out


def _pick(fields: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    lowered = {k.lower(): v for k, v in fields.items()}
    for key in keys:
        value = fields.get(key, lowered.get(key.lower()))
        if value is not None and not isinstance(value, dict | list):
            return value
    return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _level(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return _LEVELS.get(text.lower(), text.upper() or None)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return value
