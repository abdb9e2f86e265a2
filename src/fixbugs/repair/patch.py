"""Unified diffs: make them from edits, read back which lines they touch.

The validator's scope check needs to know, for any proposed diff, exactly
which lines of which files it changes; patches from a model are text we did
not write, so they are parsed, never trusted.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

__all__ = ["Hunk", "diff_hunks", "make_diff", "replace_lines"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True, slots=True)
class Hunk:
    """Lines ``start``..``end`` (1-based, inclusive) of the old ``path`` are changed.

    A pure insertion has ``end == start - 1`` (it touches no old line; it sits
    between ``end`` and ``start``).
    """

    path: str
    start: int
    end: int


def make_diff(path: str, old: str, new: str, context: int = 3) -> str:
    """A git-style unified diff of one file (``a/`` and ``b/`` prefixes)."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
        n=context,
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def replace_lines(text: str, start: int, end: int, replacement: str) -> str:
    """Replace lines ``start``..``end`` (1-based, inclusive) with ``replacement``."""
    lines = text.splitlines(keepends=True)
    if not (1 <= start <= end + 1 <= len(lines) + 1):
        raise ValueError(f"line range {start}-{end} is outside the file ({len(lines)} lines)")
    rep = replacement if replacement.endswith("\n") or not replacement else replacement + "\n"
    return "".join(lines[: start - 1]) + rep + "".join(lines[end:])


def diff_hunks(diff: str) -> list[Hunk]:
    """The old-file line ranges each hunk of ``diff`` removes or rewrites."""
    hunks: list[Hunk] = []
    path: str | None = None
    old_line = 0
    cur_start: int | None = None
    cur_end = 0

    def close() -> None:
        nonlocal cur_start
        if path is not None and cur_start is not None:
            hunks.append(Hunk(path, cur_start, cur_end))
        cur_start = None

    for raw in diff.splitlines():
        if raw.startswith("--- "):
            close()
            continue
        if raw.startswith("+++ "):
            name = raw[4:].split("\t")[0].strip()
            path = name[2:] if name.startswith(("a/", "b/")) else name
            continue
        m = _HUNK.match(raw)
        if m:
            close()
            old_line = int(m.group(1))
            continue
        if path is None or raw.startswith("\\"):
            continue
        if raw.startswith("-"):
            if cur_start is None:
                cur_start, cur_end = old_line, old_line
            else:
                cur_end = old_line
            old_line += 1
        elif raw.startswith("+"):
            if cur_start is None:
                # insertion between old_line - 1 and old_line
                cur_start, cur_end = old_line, old_line - 1
        else:
            close()
            old_line += 1
    close()
    return hunks
