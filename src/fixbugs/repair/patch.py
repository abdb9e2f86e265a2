"""Unified diffs: make them from edits, read back which lines they touch.

The validator's scope check needs to know, for any proposed diff, exactly
which lines of which files it changes; patches from a model are text we did
not write, so they are parsed, never trusted. Every reader of a diff in the
project is here (the pool's builder splits a pull request's ``git diff`` by
file and reads the lines its tests add with :func:`split_git_diff` and
:func:`added_lines`).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

__all__ = [
    "FileDiff",
    "Hunk",
    "added_lines",
    "apply_to_text",
    "changed_window",
    "diff_files",
    "diff_hunks",
    "make_diff",
    "replace_lines",
    "split_git_diff",
    "split_lines",
]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_GIT_HEADER = re.compile(r"^diff --git a/(.+) b/(.+)$")


@dataclass(frozen=True, slots=True)
class Hunk:
    """Lines ``start``..``end`` (1-based, inclusive) of the old ``path`` are changed.

    A pure insertion has ``end == start - 1`` (it touches no old line; it sits
    between ``end`` and ``start``).
    """

    path: str
    start: int
    end: int

    def _span(self) -> tuple[int, int]:
        # a pure insertion stands on its two neighbours, end and start
        return min(self.start, self.end), max(self.start, self.end)

    def within(self, path: str, start: int, end: int, slack: int = 0) -> bool:
        """Every line the hunk changes (or sits between) is in ``path``'s
        ``start - slack .. end + slack``."""
        lo, hi = self._span()
        return self.path == path and start - slack <= lo and hi <= end + slack

    def touches(self, path: str, start: int, end: int, slack: int = 0) -> bool:
        """Some line the hunk changes (or sits beside) is in ``path``'s
        ``start - slack .. end + slack``."""
        lo, hi = self._span()
        return self.path == path and lo <= end + slack and start - slack <= hi


def changed_window(a: list[str], b: list[str], margin: int = 0) -> tuple[int, int, int]:
    """``(lo, a_hi, b_hi)``: ``a[lo:a_hi]`` and ``b[lo:b_hi]`` hold every difference of the
    two line lists, with up to ``margin`` equal lines either side.

    Diffing only that window keeps a one-line edit of a 3,000-line file from
    costing a whole-file sequence match (hundreds of candidates a file).
    """
    n = min(len(a), len(b))
    p = 0
    while p < n and a[p] == b[p]:
        p += 1
    s = 0
    while s < n - p and a[-1 - s] == b[-1 - s]:
        s += 1
    keep = max(0, s - margin)
    return max(0, p - margin), len(a) - keep, len(b) - keep


_RANGES = re.compile(r"^@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@")


def make_diff(path: str, old: str, new: str, context: int = 3) -> str:
    """A git-style unified diff of one file (``a/`` and ``b/`` prefixes).

    It diffs the changed window only (:func:`changed_window`); where the
    matcher aligns a repeated line inside the window otherwise than the
    window's own ends did, a hunk can lose its context at the window's
    edge, which ``git apply`` reads as the file's start or end and refuses.
    Such a diff is made again from the whole file.
    """
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    lo, a_hi, b_hi = changed_window(a, b, context)
    out = _unified(path, a[lo:a_hi], b[lo:b_hi], lo, context)
    if not _full_context(out, len(a), context):
        out = _unified(path, a, b, 0, context)
    return out


def _unified(path: str, a: list[str], b: list[str], lo: int, context: int) -> str:
    """``a`` -> ``b`` as unified diff text, its line numbers moved down by ``lo``."""
    out = []
    for line in difflib.unified_diff(a, b, fromfile=f"a/{path}", tofile=f"b/{path}", n=context):
        m = _RANGES.match(line) if lo else None
        if m is not None:  # the window's line numbers, back to the file's
            x, y = int(m.group(1)) + lo, int(m.group(3)) + lo
            line = f"@@ -{x}{m.group(2)} +{y}{m.group(4)} @@" + line[m.end() :]
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _full_context(diff: str, old_lines: int, context: int) -> bool:
    """Every hunk has ``context`` lines before and after its changes, but where it touches
    the old file's first or last line."""
    hunks: list[tuple[int, int, list[str]]] = []
    for line in diff.splitlines():
        m = _RANGES.match(line)
        if m is not None:
            count = int(m.group(2)[1:]) if m.group(2) else 1
            hunks.append((int(m.group(1)), count, []))
        elif hunks and line[:1] in (" ", "+", "-"):
            hunks[-1][2].append(line[:1])
    for start, count, kinds in hunks:
        changed = [i for i, k in enumerate(kinds) if k != " "]
        if not changed:
            continue
        lead, trail = changed[0], len(kinds) - 1 - changed[-1]
        if lead < context and start > 1:
            return False
        if trail < context and start + count - 1 < old_lines:
            return False
    return True


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


def _header_path(raw: str) -> str:
    name = raw[4:].split("\t")[0].strip()
    return name[2:] if name.startswith(("a/", "b/")) else name


@dataclass(frozen=True, slots=True)
class FileDiff:
    """One file's part of a git diff: its path (the new one) and its text, header included."""

    path: str
    text: str
    deleted: bool


def split_git_diff(diff: str) -> list[FileDiff]:
    """The per-file parts of a ``git diff`` (each from its ``diff --git`` line), in order."""
    parts: list[FileDiff] = []
    path: str | None = None
    lines: list[str] = []

    def close() -> None:
        if path is not None:
            text = "".join(lines)
            parts.append(FileDiff(path, text, "\ndeleted file mode" in text))

    for line in diff.splitlines(keepends=True):
        m = _GIT_HEADER.match(line.rstrip("\n"))
        if m:
            close()
            path, lines = m.group(2), []
        lines.append(line)
    close()
    return parts


def added_lines(part: str) -> set[int]:
    """New-file line numbers one file's diff adds, plus the line before each removal
    (the new side's view of :func:`diff_hunks`, which gives the old side's ranges)."""
    out: set[int] = set()
    line: int | None = None
    for raw in part.splitlines():
        m = _HUNK.match(raw)
        if m:
            line = int(m.group(3))
            continue
        if line is None or raw.startswith("\\"):
            continue
        if raw.startswith("+"):
            out.add(line)
            line += 1
        elif raw.startswith("-"):
            if line > 1:
                out.add(line - 1)
        else:
            line += 1
    return out


def diff_files(diff: str) -> list[str]:
    """The files a unified diff changes (its ``+++`` names), in order, once each."""
    out: dict[str, None] = {}
    for raw in diff.splitlines():
        if raw.startswith("+++ "):
            name = _header_path(raw)
            if name != "/dev/null":
                out[name] = None
    return list(out)


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
            mine = _header_path(raw.rstrip("\r\n")) == path
        elif m := _HUNK.match(raw):
            body = []
            left = (int(m.group(2) or 1), int(m.group(4) or 1))
            if mine:
                hunks.append((int(m.group(1)), body))
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
