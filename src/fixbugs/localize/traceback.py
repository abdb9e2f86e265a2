"""Parse Python tracebacks and pytest failure output into frames.

A traceback is the strongest static evidence a bug report carries: the
deepest frame in the project's own (non-test) code is where the failure
surfaced. Reports paste tracebacks in several shapes — CPython's
``File "x", line N, in f``, pytest's long form (code block, then
``path:line: ExcType``), pytest's short/collapsed ``path:line: in func`` —
and with paths from the reporter's machine (``/home/user/project/...``), so
paths are mapped back onto the repository's files by their longest
matching suffix. Frames in an installed copy of the project itself
(``site-packages/pkg/...``) map to the repository's ``pkg/...``; frames in
other installed packages and the standard library map to nothing. An
exception line, in a report as in a test run, is what the one reader of a
run says it is (:func:`fixbugs.pyenv.raised.exception_line`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace

from fixbugs.index.paths import is_test_path
from fixbugs.inputs import pieces as bounded
from fixbugs.pyenv.raised import exception_line, is_exception_name

__all__ = [
    "Frame",
    "ParsedFailure",
    "anchor_frames",
    "parse_failure",
    "relativize",
]

# IPython's frames: "path.py in func(args)" then the lines around "---> N code"; IPython 8
# writes "File path.py:N, in func(args)"
_IPY_OLD = re.compile(r"^(?P<path>\S+\.pyx?) in (?P<func>[\w.<>]+)\(")
_IPY_NEW = re.compile(r"^File (?P<path>[^\s,]+\.pyx?):(?P<line>\d+), in (?P<func>[\w.<>]+)")
_IPY_ARROW = re.compile(r"^-+>\s*(?P<line>\d+)\s?(?P<code>.*)$")
_CPYTHON = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>\S+))?')
# pytest location line: "path.py:12: in func", "path.py:12: ValueError", "path.py:12: "
# (a path is at most 4096 characters: a long line is not read to its end for one)
_PYTEST_LOC = re.compile(r"^(?P<path>[^\s:][^:\s]{0,4095}\.py):(?P<line>\d+):(?: (?P<rest>.*))?$")
# a warnings-summary location: "path.py:23" alone on a line
_WARNING_LOC = re.compile(r"^(?P<path>[^\s:][^:\s]{0,4095}\.py):(?P<line>\d+)$")
_DEF = re.compile(r"^\s*(?:>\s*)?(?:async\s+)?def\s+(?P<name>\w+)\s*\(")
# from the start of a path only, and a parameter list up to the next bracket: linear on
# a run of path characters or of unclosed brackets
_NODE_ID = re.compile(r"(?<![\w./-])(?P<id>[\w./-]+\.py::[\w:]+(?:\[[^\[\]\n]*+\])?)")
# a line a person leaves where they cut a pasted traceback short
_CUT = re.compile(r"^\s*(?:\.\.\.|\[\.\.\.\]|…|\[…\]|\(\.\.\.\)|\[snip\w*\]|<snip\w*>)\s*$", re.I)
_SECTION = re.compile(r"^_{3,} (?P<name>.+?) _{3,}$")
_INSTALLED = ("site-packages/", "dist-packages/", "/lib/python", "<frozen", "<string>", "<")
_PACKAGE_DIRS = ("site-packages/", "dist-packages/")


@dataclass(frozen=True, slots=True)
class Frame:
    """One traceback frame. ``path`` is relative to the repository, or None outside it."""

    path: str | None
    line: int
    function: str | None
    text: str
    raw_path: str = ""
    depth: int = 0  # 0 = the innermost frame of its traceback, 1 = its caller, …
    kind: str = "frame"  # "frame" or "warning" (a warnings-summary location)


@dataclass(frozen=True, slots=True)
class ParsedFailure:
    """Everything localization needs from failure output."""

    tracebacks: tuple[tuple[Frame, ...], ...] = ()  # each outermost → innermost
    warnings: tuple[Frame, ...] = ()
    failing_tests: tuple[str, ...] = ()
    exception_type: str | None = None
    exception_message: str | None = None
    notes: tuple[str, ...] = field(default=())
    # indexes into ``tracebacks`` of pasted traces cut short ("...", "[...]"): their
    # innermost shown frame is a caller of the failure, not its site
    truncated: frozenset[int] = frozenset()

    @property
    def frames(self) -> tuple[Frame, ...]:
        return tuple(f for tb in self.tracebacks for f in tb)

    def project_frames(self, *, include_tests: bool = False) -> tuple[Frame, ...]:
        return tuple(
            f
            for f in self.frames
            if f.path is not None and (include_tests or not is_test_path(f.path))
        )


def relativize(raw: str, repo_files: Collection[str] | None) -> str | None:
    """Map a path from a report onto a repository file, or None.

    Without a file list, relative paths are kept as given. With one, the
    longest suffix of the path that names a repository file wins; a bare
    file name from an absolute path is not enough (``__init__.py`` is in
    every package). A frame in an *installed copy* of the project
    (``…/site-packages/pkg/mod.py``, ``/usr/lib/python3/dist-packages/…``,
    an egg) is the repository's own ``pkg/mod.py`` (or ``src/pkg/mod.py``)
    when the repository has it: users run the released package, not the
    work tree. Other installed packages and the standard library map to
    nothing.
    """
    path = raw.strip().replace("\\", "/")
    installed = _installed_part(path)
    if installed is not None:
        return _installed_file(installed, repo_files)
    if any(marker in path for marker in _INSTALLED):
        return None
    path = path.removeprefix("./")
    if repo_files is None:
        return None if path.startswith("/") else path
    if path in repo_files:
        return path
    parts = [p for p in path.split("/") if p]
    absolute = path.startswith("/")
    for start in range(1, len(parts)):
        if absolute and len(parts) - start < 2:
            break
        cand = "/".join(parts[start:])
        if cand in repo_files:
            return cand
    return None


def _installed_part(path: str) -> str | None:
    """The path inside ``site-packages``/``dist-packages``, or None for other paths."""
    for marker in _PACKAGE_DIRS:
        if marker in path:
            rest = path.rsplit(marker, 1)[1]
            parts = [p for p in rest.split("/") if p]
            if parts and parts[0].endswith((".egg", ".whl")):  # zipped or egg installs
                parts = parts[1:]
            return "/".join(parts) or None
    return None


def _installed_file(rel: str, repo_files: Collection[str] | None) -> str | None:
    """The repository file an installed module came from: ``pkg/mod.py`` at the root or
    under a source folder (``src/pkg/mod.py``); the shortest such path wins."""
    if repo_files is None:
        return None
    if rel in repo_files:
        return rel
    if "/" not in rel:
        return None  # a lone module name (six.py) is too weak to claim a file
    tail = "/" + rel
    found = sorted((f for f in repo_files if f.endswith(tail)), key=lambda f: (len(f), f))
    return found[0] if found else None


def _frame(
    raw: str,
    line: str,
    func: str | None,
    text: str,
    files: Collection[str] | None,
    kind: str = "frame",
) -> Frame:
    return Frame(relativize(raw, files), int(line), func, text.strip(), raw, 0, kind)


def _with_depths(frames: list[Frame]) -> tuple[Frame, ...]:
    n = len(frames)
    return tuple(
        Frame(f.path, f.line, f.function, f.text, f.raw_path, n - 1 - i, f.kind)
        for i, f in enumerate(frames)
    )


def anchor_frames(failure: ParsedFailure, files: Mapping[str, str]) -> ParsedFailure:
    """Frames moved to the line that holds the code they quote, when theirs does not.

    A reporter runs a released copy; the repository is another version, so a
    frame's line number is often off by some lines while the code line it
    quotes is still there. The nearest line with that text (whitespace aside)
    wins; a frame whose text is not found, or that quotes nothing, stays.
    """

    def moved(f: Frame) -> Frame:
        text = " ".join(f.text.split())
        if f.path is None or len(text) < 6 or f.path not in files:
            return f
        lines = files[f.path].splitlines()
        if 0 < f.line <= len(lines) and " ".join(lines[f.line - 1].split()) == text:
            return f
        found = [n for n, ln in enumerate(lines, 1) if " ".join(ln.split()) == text]
        if not found:
            return f
        best = min(found, key=lambda n: (abs(n - f.line), n))
        return Frame(f.path, best, f.function, f.text, f.raw_path, f.depth, f.kind)

    tracebacks = tuple(tuple(moved(f) for f in tb) for tb in failure.tracebacks)
    return replace(failure, tracebacks=tracebacks)


def _ipython_line(lines: list[str], i: int) -> tuple[str, str] | None:
    """(line number, code) of the ``--->`` line under IPython's frame header ``i``."""
    for nxt in lines[i + 1 : i + 16]:
        if _IPY_OLD.match(nxt.strip()) or _IPY_NEW.match(nxt.strip()):
            return None
        a = _IPY_ARROW.match(nxt.strip())
        if a:
            return a["line"], a["code"].strip()
    return None


def parse_failure(text: str, repo_files: Collection[str] | None = None) -> ParsedFailure:
    """Parse any mix of CPython tracebacks and pytest output (long, short or line form)."""
    tracebacks: list[tuple[Frame, ...]] = []
    warnings: list[Frame] = []
    current: list[Frame] = []
    block: list[str] = []  # pytest long form: source lines since the last location line
    exc_type: str | None = None
    exc_msg: str | None = None
    in_warnings = False
    cut: set[int] = set()  # indexes of tracebacks whose innermost frames were left out
    lines = text.splitlines()

    def close() -> None:
        nonlocal current
        if current:
            tracebacks.append(_with_depths(current))
        current = []

    for i, line in enumerate(lines):
        stripped = line.strip()
        section = _SECTION.match(stripped) if stripped.startswith("___") else None
        if line.startswith("Traceback (most recent call last)") or section:
            close()
            block = []
            continue
        if stripped.startswith("=====") and "warnings summary" in stripped:
            close()
            in_warnings = True
            continue
        if stripped.startswith("====="):
            close()
            in_warnings = False
            continue
        if in_warnings:
            w = _WARNING_LOC.match(stripped)
            if w:
                warnings.append(_frame(w["path"], w["line"], None, "", repo_files, "warning"))
            continue
        ipy = _IPY_NEW.match(stripped) or _IPY_OLD.match(stripped)
        if ipy:
            at = _ipython_line(lines, i)
            number = ipy.groupdict().get("line") or (at[0] if at else None)
            if number is not None:
                text = at[1] if at else ""
                current.append(_frame(ipy["path"], str(number), ipy["func"], text, repo_files))
            continue
        m = _CPYTHON.match(line)
        if m:
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            code = "" if _CPYTHON.match(nxt) or _CUT.match(nxt) else nxt.strip()
            current.append(_frame(m["path"], m["line"], m["func"], code, repo_files))
            continue
        if current and _CUT.match(line):
            cut.add(len(tracebacks))  # frames below the last one shown were left out
            continue
        m = _PYTEST_LOC.match(line)
        if m:
            rest = (m["rest"] or "").strip()
            func: str | None = rest[3:].strip() if rest.startswith("in ") else None
            if func is None:
                func = next((d["name"] for d in map(_DEF.match, reversed(block)) if d), None)
            code = next((b[1:].strip() for b in block if b.startswith(">")), "")
            if not code and rest.startswith("in ") and i + 1 < len(lines):
                code = lines[i + 1].strip()  # short form: the code line follows
            current.append(_frame(m["path"], m["line"], func, code, repo_files))
            if rest and not rest.startswith("in ") and is_exception_name(rest) and exc_type is None:
                exc_type = rest
            block = []
            continue
        # pytest's E line, or (after a frame) a traceback's unindented last line
        r = exception_line(line)
        if r is not None and (r.marked or current) and exc_type is None:
            exc_type, exc_msg = r.type, r.message or None
        elif r is not None and r.marked and exc_msg is None and r.type == exc_type:
            exc_msg = r.message or None
        block.append(line)
    close()
    failing = tuple(dict.fromkeys(m["id"] for m in bounded.finditer(_NODE_ID, text)))
    return ParsedFailure(
        tuple(tracebacks), tuple(warnings), failing, exc_type, exc_msg, truncated=frozenset(cut)
    )
