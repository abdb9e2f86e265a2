"""The bug report: what the user says is wrong.

Three shapes arrive in practice: a markdown file (a ``# Title`` heading and
a body), plain text (the first line is the title), and a GitHub issue as
JSON, either as ``gh issue view --json title,body,comments`` prints it (a
``comments`` list) or as the REST API returns it (``comments`` a count; the
comments, if given, beside it as ``{"issue": {...}, "comments": [...]}`` or
as a list whose first item is the issue). JSON is parsed within bounds
(:mod:`~fixbugs.inputs.boundedjson`): one nested past them is refused
with one line, never a ``RecursionError``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from fixbugs.errors import InputError
from fixbugs.inputs.boundedjson import loads
from fixbugs.inputs.fences import fenced_blocks
from fixbugs.inputs.textfile import clean_text, looks_binary_document, require_file

__all__ = ["BugReport", "ReportFormat", "load_report"]

ReportFormat = Literal["markdown", "text", "github"]
MAX_REPORT_BYTES = 5_000_000


@dataclass(frozen=True)
class BugReport:
    title: str
    body: str
    comments: tuple[str, ...]
    source: Path
    format: ReportFormat
    notes: tuple[str, ...] = ()  # what reading it changed (terminal escapes cleaned, ...)

    @property
    def text(self) -> str:
        """Everything the user wrote, for search and prompts."""
        return "\n\n".join([self.title, self.body, *self.comments]).strip()


def load_report(path: Path) -> BugReport:
    """Read a bug report, choosing the format from the extension and the content."""
    p = require_file(path, "bug report")
    data = p.read_bytes()
    if len(data) > MAX_REPORT_BYTES:
        raise InputError(
            f"bug report {p} is {len(data)} bytes (limit {MAX_REPORT_BYTES}); "
            "pass the report, and give logs with --logs"
        )
    if looks_binary_document(data[:8192]):
        raise InputError(f"bug report {p} is binary; give a markdown, text or GitHub JSON file")
    cleaned = clean_text(data.decode("utf-8", errors="replace").lstrip("\ufeff"))
    text = cleaned.text
    note = cleaned.note(f"bug report {p}")
    if not text.strip():
        raise InputError(f"bug report {p} is empty; describe the bug in it")
    report = _parse(p, text)
    return replace(report, notes=(note,)) if note else report


def _parse(p: Path, text: str) -> BugReport:
    if p.suffix.lower() == ".json":
        return _github(p, text)
    if text.lstrip().startswith(("{", "[")) and _is_json(p, text):
        return _github(p, text)  # an issue saved as JSON under another name
    # a title like "[bug] mean fails" is no JSON: the extension decides
    if p.suffix.lower() in (".md", ".markdown", ".mdown"):
        return _markdown(p, text)
    return _plain(p, text)


def _is_json(p: Path, text: str) -> bool:
    try:
        loads(text, f"bug report {p}")
    except json.JSONDecodeError:
        return False
    return True


def _markdown(p: Path, text: str) -> BugReport:
    """The first ``# `` heading is the title; one inside a fenced block is a code comment
    (a pasted script's ``# expected 5``), else the first line is the title."""
    lines = text.splitlines(keepends=True)
    fenced = fenced_blocks(text)  # in order: one pass over both (linear in the report)
    at, j = 0, 0
    for i, line in enumerate(lines):
        start, at = at, at + len(line)
        while j < len(fenced) and fenced[j].end < start:
            j += 1
        inside = j < len(fenced) and fenced[j].start <= start <= fenced[j].end
        if line.startswith("# ") and not inside:
            title = line[2:].strip()
            body = "".join(lines[:i] + lines[i + 1 :]).strip()
            return BugReport(title, body, (), p, "markdown")
    plain = _plain(p, text)
    return BugReport(plain.title.lstrip("#").strip(), plain.body, (), p, "markdown")


def _plain(p: Path, text: str) -> BugReport:
    lines = text.strip().splitlines()
    return BugReport(lines[0].strip(), "\n".join(lines[1:]).strip(), (), p, "text")


def _github(p: Path, text: str) -> BugReport:
    try:
        doc = loads(text, f"bug report {p}")
    except json.JSONDecodeError as e:
        raise InputError(
            f"bug report {p} is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg}); "
            "fix the file or save the report as markdown"
        ) from e
    comments: list[Any] = []
    issue: Any = doc
    if isinstance(doc, list):
        if not doc:
            raise InputError(f"bug report {p} is an empty JSON list; give a GitHub issue object")
        issue, comments = doc[0], list(doc[1:])
    elif isinstance(doc, dict) and isinstance(doc.get("issue"), dict):
        issue = doc["issue"]
        comments = list(doc.get("comments") or [])
    if not isinstance(issue, dict) or not ("title" in issue or "body" in issue):
        raise InputError(
            f"bug report {p} is JSON without an issue 'title' or 'body'; "
            "give a GitHub issue (gh issue view N --json title,body,comments)"
        )
    if isinstance(issue.get("comments"), list):
        comments = list(issue["comments"]) + comments
    rendered = tuple(c for c in (clean_text(_comment(c)).text for c in comments) if c)
    title = clean_text(str(issue.get("title") or "")).text.strip()
    body = clean_text(str(issue.get("body") or "")).text.strip()
    if not title and body:
        title, _, body = body.partition("\n")
    return BugReport(title.strip(), body.strip(), rendered, p, "github")


def _comment(item: Any) -> str:
    if isinstance(item, str):
        return item.strip()
    if not isinstance(item, dict):
        return ""
    body = str(item.get("body") or "").strip()
    who = item.get("author") or item.get("user") or {}
    login = who.get("login") if isinstance(who, dict) else None
    return f"{login}: {body}" if login and body else body
