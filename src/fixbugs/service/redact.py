"""Error text a client reads names no absolute path of the server.

A 400 for a bad upload or a failed job's error is often an exception's text,
and that text names where the server keeps things: the workspace root, a
job's directory, an interpreter under ``/usr`` or a home under ``/root``.
Each such path tells an attacker what to aim at (the coverage-path attack of
issue 21 needed exactly such names), so every error body goes through
:class:`PathRedactor` once, at the app's answer: a path inside a job's
directory becomes relative to it (``input/report.md``), the rest of the
workspace becomes ``<workspace>``, and any other absolute path ``<path>``.
A failed job's reason is that, on one line and bounded (:meth:`PathRedactor.reason`):
an exception's text can span lines (a traceback, a validation error's list).
"""

from __future__ import annotations

import re
from pathlib import Path

from fixbugs.inputs.inert import one_line

__all__ = ["PathRedactor"]

_REASON_CHARS = 500  # the longest failure reason a client reads

# an absolute POSIX path: a slash that does not continue a word or a relative
# path, up to the first character that cannot be part of a name in prose
_NAME = r"[^\s'\"`<>|,;:()\[\]{}]"
_ABSOLUTE = re.compile(r"(?<![\w.~-])/+" + _NAME + "+")


class PathRedactor:
    """Rewrites the server's absolute paths in error text into neutral forms."""

    def __init__(self, workspace: Path) -> None:
        root = re.escape(str(workspace).rstrip("/"))
        self._in_job = re.compile(root + r"/jobs/[A-Za-z0-9]+/+(?=" + _NAME + ")")
        self._job = re.compile(root + r"/jobs/[A-Za-z0-9]+/*(?![\w.-])")
        self._root = re.compile(root + r"(?:/" + _NAME + r"*)?(?![\w.-])")

    def __call__(self, text: str) -> str:
        text = self._in_job.sub("", text)  # <job dir>/input/r.md -> input/r.md
        text = self._job.sub(".", text)
        text = self._root.sub("<workspace>", text)
        return _ABSOLUTE.sub("<path>", text)

    def reason(self, text: str) -> str:
        """A failure's reason as a client reads it: redacted, on one line, bounded."""
        line = one_line(self(text))
        return line if len(line) <= _REASON_CHARS else line[: _REASON_CHARS - 3] + "..."
