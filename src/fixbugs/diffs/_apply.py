"""Applying a diff to one file's text in memory, without writing the file.

The shape checks and the scorer read a patched file this way; a tree on
disk is patched by the sandbox alone.
"""

from __future__ import annotations

import re

from fixbugs.diffs._read import file_header, hunk_header

__all__ = ["apply_to_text", "split_lines"]


def apply_to_text(text: str, diff: str, path: str, *, fuzz: int = 50) -> str | None:
    """``text`` with the hunks ``diff`` has for ``path`` applied, in memory; None if one fails.

    A hunk whose old lines are not found where it says (or within ``fuzz``
    lines of there) does not apply; no context line is ever ignored.
    """
    hunks: list[tuple[int, list[list[str]]]] = []  # (old start, [[tag, line], ...])
    mine = False
    body: list[list[str]] = []
    left = (0, 0)  # old and new lines the current hunk still has to come
    for raw in split_lines(diff):
        if raw.startswith("\\"):
            if body:  # "\ No newline at end of file": the line before it has none
                body[-1][1] = body[-1][1].rstrip("\n")
            continue
        if left != (0, 0):
            tag = raw[:1] if raw[:1] in ("+", "-", " ") else (" " if raw in ("\n", "") else "")
            if not tag:
                return None  # a hunk cut short
            body.append([tag, raw[1:] if raw[:1] == tag else raw])
            left = (left[0] - (tag != "+"), left[1] - (tag != "-"))
            if min(left) < 0:
                return None
            continue
        if raw.startswith("+++ "):
            mine = file_header(raw) == path
        elif head := hunk_header(raw):
            body = []
            left = (head.old_count, head.new_count)
            if mine:
                hunks.append((head.old_start, body))
    if not hunks:
        return None
    lines = split_lines(text)
    out: list[str] = []
    pos = 0  # the next old line (0-based) not yet copied
    for start, recs in hunks:
        old = [t for tag, t in recs if tag != "+"]
        new = [t for tag, t in recs if tag != "-"]
        at = _find(lines, old, max(0, start - 1) if old else start, pos, fuzz)
        if at is None:
            return None
        out += lines[pos:at]
        out += new
        pos = at + len(old)
    out += lines[pos:]
    return "".join(out)


def split_lines(text: str) -> list[str]:
    """Lines split at newlines only, as ``patch`` splits them (a form feed stays in its line)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _find(lines: list[str], old: list[str], want: int, lo: int, fuzz: int) -> int | None:
    """Where ``old`` occurs in ``lines`` at or after ``lo``, nearest ``want`` (within ``fuzz``)."""
    n = len(old)
    for d in range(fuzz + 1):
        for at in (want - d, want + d) if d else (want,):
            if lo <= at <= len(lines) - n and lines[at : at + n] == old:
                return at
    return None
