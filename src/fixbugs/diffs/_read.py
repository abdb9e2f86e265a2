"""Reading a unified diff: its file headers, its hunk headers, the lines it touches.

The validator's scope check, the shape checks, the scorer, the pool's
builder and the sandbox's roll-back all ask a diff which files and which
lines it changes; they ask it here, through :func:`file_header` and
:func:`hunk_header`, so there is one reading of a header in the project.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "FileDiff",
    "Hunk",
    "HunkHeader",
    "added_lines",
    "changed_line_counts",
    "diff_files",
    "diff_hunks",
    "file_header",
    "hunk_header",
    "split_git_diff",
    "touched_files",
]

_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")
_GIT_HEADER = re.compile(r"^diff --git a/(.+) b/(.+)$")


@dataclass(frozen=True, slots=True)
class HunkHeader:
    """A hunk's ``@@ -a,b +c,d @@`` line: where its old and new lines start, and how many.

    ``rest`` is what follows the closing ``@@`` (git puts the enclosing
    function there); ``counted`` says which of the two ranges wrote its
    count (``-a`` alone means one line), so :meth:`moved` writes the line
    back in the form it had.
    """

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    rest: str
    counted: tuple[bool, bool]

    def moved(self, by: int) -> str:
        """The header line with both starts moved down by ``by`` lines."""
        old = f"{self.old_start + by}" + (f",{self.old_count}" if self.counted[0] else "")
        new = f"{self.new_start + by}" + (f",{self.new_count}" if self.counted[1] else "")
        return f"@@ -{old} +{new} @@{self.rest}"


def hunk_header(line: str) -> HunkHeader | None:
    """``line`` read as a hunk header, or None if it is not one."""
    m = _HUNK.match(line)
    if m is None:
        return None
    old_n, new_n = m.group(2), m.group(4)
    return HunkHeader(
        int(m.group(1)),
        int(old_n[1:]) if old_n else 1,
        int(m.group(3)),
        int(new_n[1:]) if new_n else 1,
        line[m.end() :].rstrip("\r\n"),
        (old_n is not None, new_n is not None),
    )


def file_header(line: str) -> str | None:
    """The path a ``--- ``/``+++ `` line names (``a/``/``b/`` dropped), or None if it is
    not one. ``/dev/null`` is returned as it is: the side of a created or deleted file."""
    if not line.startswith(("--- ", "+++ ")):
        return None
    name = line[4:].rstrip("\r\n").split("\t")[0].strip()
    return name[2:] if name.startswith(("a/", "b/")) else name


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
            path = file_header(raw)
            continue
        head = hunk_header(raw)
        if head is not None:
            close()
            old_line = head.old_start
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
        head = hunk_header(raw)
        if head is not None:
            line = head.new_start
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
            name = file_header(raw)
            if name is not None and name != "/dev/null":
                out[name] = None
    return list(out)


def touched_files(diff: str) -> tuple[str, ...]:
    """The paths a unified diff's ``---``/``+++`` headers name (both sides: a failed patch
    puts every one back), in order, once each; the new side alone is :func:`diff_files`."""
    names = (file_header(raw) for raw in diff.splitlines())
    return tuple(dict.fromkeys(n for n in names if n and n != "/dev/null"))


def changed_line_counts(diff: str) -> tuple[int, int]:
    """Lines the diff adds and removes, counted inside its hunks (headers are not lines)."""
    added = removed = 0
    left = (0, 0)  # old and new lines the current hunk still has to come
    for raw in diff.splitlines():
        if left == (0, 0):
            head = hunk_header(raw)
            if head is not None:
                left = (head.old_count, head.new_count)
            continue
        if raw.startswith("\\"):
            continue
        tag = raw[:1]
        added += tag == "+"
        removed += tag == "-"
        left = (max(0, left[0] - (tag != "+")), max(0, left[1] - (tag != "-")))
    return added, removed
