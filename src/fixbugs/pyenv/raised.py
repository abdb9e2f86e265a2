"""What a failing test raised and where: the exception lines and locations of a run's text.

Part of the one reader of a test run (:mod:`fixbugs.pyenv.testoutput`):
the failure sections are found there, and what a failure raised is read
here, with one set of exception-name patterns. A name is dotted or not and
ends the way Python's exceptions do (``Error``, ``Exception``, ``Exit``,
``Interrupt``, ``Failure``, ``Warning``; ``gaierror``, ``DistributionNotFound``,
``VersionConflict``). An exception line is that name followed by ``:`` and
its message, or by nothing, in three shapes: pytest's ``E   Type: message``,
a traceback's unindented last ``Type: message`` as CPython prints it, and
pytest's crash line ``path.py:12: Type``. The frames a traceback went
through are pytest's ``path.py:12: in func`` and CPython's
``File "path.py", line 12``. Pure functions of text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Location",
    "Raised",
    "assertion_diff",
    "assertion_sides",
    "exception_line",
    "final_exception",
    "frames",
    "is_exception_name",
    "locations",
    "raised",
    "traceback_lines",
]

_SUFFIX = r"(?:Error|Exception|Exit|Interrupt|Failure|Warning|error|NotFound|Conflict)"
_TYPE = rf"(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*{_SUFFIX})"
_E_EXC = re.compile(rf"^E\s+{_TYPE}(?::\s?(?P<msg>.*))?$")
_PLAIN_EXC = re.compile(rf"^{_TYPE}(?::\s?(?P<msg>.*))?$")
_EXC_NAME = re.compile(rf"^{_TYPE}$")
# pytest's crash line: the exception's class name after the raising ``path:line``
_CRASH = re.compile(r"^(?P<path>[^\s:][^:\n]*\.py):(?P<line>\d+): (?P<name>\w+)$", re.M)
# pytest's long traceback: each frame's ``path:line: in function``, or ``path:line: `` for
# the test's own frame (the crash line has the exception's name instead)
_FRAME = re.compile(r"^(?P<path>[^\s:][^:\n]*\.py):(?P<line>\d+):(?: in [\w<>.]+)? ?$", re.M)
# CPython's frame line; [ \t], not \s: a \s* would run on over blank lines from every line
_FILE_LINE = re.compile(r'^[ \t]*File "(?P<path>[^"]+\.py)", line (?P<line>\d+)', re.M)
_CAPTURED = re.compile(r"^-{3,} Captured ", re.M)
_ASSERT_EQ = re.compile(r"^E\s+(?:AssertionError: )?assert (.+?) == (.+)$", re.M)
_DIFF = re.compile(r"^E\s{3,}([-+]) (.*)$", re.M)

LocationKind = Literal["crash", "frame", "file"]


@dataclass(frozen=True, slots=True)
class Raised:
    """One exception line: its type as printed (maybe dotted) and its message."""

    type: str
    message: str
    marked: bool  # pytest's ``E`` line, not a plain traceback's line

    @property
    def short(self) -> str:
        """The class name without its module: ``requests.exceptions.HTTPError`` -> ``HTTPError``."""
        return self.type.rsplit(".", 1)[-1]


@dataclass(frozen=True, slots=True)
class Location:
    """A ``path:line`` a traceback printed, where in the text, and the exception's name
    on pytest's crash line (``name`` is "" on a frame)."""

    at: int  # offset in the text
    path: str
    line: int
    kind: LocationKind
    name: str = ""


def is_exception_name(name: str) -> bool:
    """``name`` is spelled as an exception's class (see the module docstring)."""
    return _EXC_NAME.match(name) is not None


def raised(text: str) -> list[Raised]:
    """Every exception line of ``text``, ``E`` lines and plain ones, in order."""
    return _raised(text.splitlines())


def _raised(lines: list[str]) -> list[Raised]:
    return [r for line in lines if (r := exception_line(line)) is not None]


def exception_line(line: str) -> Raised | None:
    """The exception ``line`` shows (pytest's ``E`` line or a plain one), or None."""
    if m := _E_EXC.match(line):
        return Raised(m["type"], (m["msg"] or "").strip(), marked=True)
    if m := _PLAIN_EXC.match(line):
        return Raised(m["type"], (m["msg"] or "").strip(), marked=False)
    return None


def traceback_lines(text: str) -> list[str]:
    """``text`` up to its captured output (``--- Captured stdout call ---``)."""
    captured = _CAPTURED.search(text)
    return text[: captured.start() if captured else None].splitlines()


def final_exception(text: str) -> tuple[str, str] | None:
    """(type, message) of the exception ``text`` ends with, or None when it shows none.

    pytest's ``E`` lines come first (the last one is the end of the chain;
    the message of a bare ``assert`` is its ``E`` lines, its type the
    crash line's); else the last unindented ``Type: message`` line, as
    CPython prints it. Captured output after the traceback is not read.
    """
    lines = traceback_lines(text)
    found = _raised(lines)
    if marked := [r for r in found if r.marked]:
        return marked[-1].type, marked[-1].message
    crash = [
        m["name"] for line in lines if (m := _CRASH.match(line)) and is_exception_name(m["name"])
    ]
    if crash:
        message = " ".join(line[1:].strip() for line in lines if line.startswith("E "))
        return crash[-1], message
    if found:
        return found[-1].type, found[-1].message
    return None


def locations(text: str) -> list[Location]:
    """Every ``path:line`` of ``text``'s tracebacks: pytest's crash lines, then its frame
    lines, then CPython's ``File`` lines, each group in the text's order."""
    out = [
        Location(m.start(), m["path"], int(m["line"]), "crash", m["name"])
        for m in _CRASH.finditer(text)
    ]
    out += [Location(m.start(), m["path"], int(m["line"]), "frame") for m in _FRAME.finditer(text)]
    out += [
        Location(m.start(), m["path"], int(m["line"]), "file") for m in _FILE_LINE.finditer(text)
    ]
    return out


def frames(text: str) -> list[tuple[str, int]]:
    """(path, line) of a failing run's traceback frames, innermost first, each once.

    pytest's long form (``path:line: in f``, and the crash line
    ``path:line: ExcName``) or a plain traceback (``File "path", line N``).
    """
    found = sorted((loc.at, (loc.path, loc.line)) for loc in locations(text))
    out: dict[tuple[str, int], None] = {}
    for _, at in reversed(found):
        out.setdefault(at, None)
    return list(out)


def assertion_sides(text: str) -> tuple[tuple[str, str], ...]:
    """(left, right) of each failed ``assert a == b`` pytest printed."""
    return tuple((m.group(1).strip(), m.group(2).strip()) for m in _ASSERT_EQ.finditer(text))


def assertion_diff(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``-`` and ``+`` lines of pytest's diff of a failed comparison."""
    found = [(m.group(1), m.group(2)) for m in _DIFF.finditer(text)]
    return tuple(t for s, t in found if s == "-"), tuple(t for s, t in found if s == "+")
