"""Unified diffs, the one model of them: read, made, applied in memory.

Patches from a model, a pull request or a real fix are text FixBugs did not
write, so they are parsed, never trusted: which files and which lines a diff
touches (:mod:`._read`, the project's only reader of ``---``/``+++`` and
``@@`` lines), a diff made from two texts (:mod:`._make`), and a diff applied
to one file's text in memory (:mod:`._apply`). Applying a diff to a tree on
disk is the sandbox's (:func:`fixbugs.sandbox.patching.apply_patch`), which
reads the diff through this package.

The package imports nothing of FixBugs: every floor may use it.
"""

from fixbugs.diffs._apply import apply_to_text, split_lines
from fixbugs.diffs._make import changed_window, make_diff, replace_lines
from fixbugs.diffs._read import (
    FileDiff,
    Hunk,
    HunkHeader,
    added_lines,
    changed_line_counts,
    diff_files,
    diff_hunks,
    file_header,
    hunk_header,
    split_git_diff,
    touched_files,
)

__all__ = [
    "FileDiff",
    "Hunk",
    "HunkHeader",
    "added_lines",
    "apply_to_text",
    "changed_line_counts",
    "changed_window",
    "diff_files",
    "diff_hunks",
    "file_header",
    "hunk_header",
    "make_diff",
    "replace_lines",
    "split_git_diff",
    "split_lines",
    "touched_files",
]
