"""Making a unified diff from two texts, and the line edits the repair makes them from."""

from __future__ import annotations

import difflib

from fixbugs.diffs._read import hunk_header

__all__ = ["changed_window", "make_diff", "replace_lines"]


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
        head = hunk_header(line) if lo else None
        if head is not None:  # the window's line numbers, back to the file's
            line = head.moved(lo) + "\n"
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _full_context(diff: str, old_lines: int, context: int) -> bool:
    """Every hunk has ``context`` lines before and after its changes, but where it touches
    the old file's first or last line."""
    hunks: list[tuple[int, int, list[str]]] = []
    for line in diff.splitlines():
        head = hunk_header(line)
        if head is not None:
            hunks.append((head.old_start, head.old_count, []))
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
