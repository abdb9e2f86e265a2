"""What the failing run tells a repair: exceptions, failing lines, expected vs actual.

Only generic signals are read from the test output: the exception types a
traceback ends with, the project lines it went through, and the two sides of
a failed ``assert a == b`` (pytest prints both, and a ``- … / + …`` line
diff), whether a ``None`` or an empty string was used as a value or came
back where a value was expected, and the string keys the failing lines read
(``result['id']``). String templates use tokens the expected side holds and
the code lacks; :func:`printed_literal_lines` finds the code's own string
literals that the run printed, and :func:`repo_path` maps a printed path to
the repository's. Nothing here knows about any one project. The exception
lines, locations and assertion sides (and a failure's frames,
:func:`fixbugs.pyenv.raised.frames`) are read by the one reader of a test
run (:mod:`fixbugs.pyenv.raised`); what they hint at is judged here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass

from agentrt import literal_value, parse_python
from fixbugs.pyenv.raised import assertion_diff, assertion_sides, locations, raised

__all__ = [
    "FailureHints",
    "parse_hints",
    "printed_literal_lines",
    "repo_path",
    "test_literals",
    "test_numbers",
]

# a None used as a value (``'NoneType' object has no attribute 'x'``, ``... is not iterable``)
_NONE_VALUE = re.compile(r"'NoneType' object")
# a key the failing line reads: ``result['id']``, ``info.get("title")`` on pytest's ``>`` lines
_READ_KEY = re.compile(r"""(?:\[\s*|\.get\(\s*)(['"])([A-Za-z_][\w.-]{0,40})\1\s*[\]),]""")
# the code gave nothing where a value was expected: ``None != 'foo'`` (unittest, actual
# first) or ``assert None == 'foo'`` (pytest)
_GOT_NOTHING = re.compile(
    r"^E\s+(?:AssertionError: (?:None|\[\]|''|\{\}) != |(?:AssertionError: )?assert "
    r"(?:None|\[\]|''|\{\}) == )",
    re.M,
)
_WORD = re.compile(r"[-\w.:/@']+")


@dataclass(frozen=True, slots=True)
class FailureHints:
    exceptions: tuple[str, ...] = ()  # exception class names, most frequent first
    locations: tuple[tuple[str, int], ...] = ()  # (path, line) of non-test frames
    sides: tuple[tuple[str, str], ...] = ()  # (left, right) of failed ``==`` asserts
    diff_minus: tuple[str, ...] = ()
    diff_plus: tuple[str, ...] = ()
    saw_none: bool = False  # the failure used a None as a value
    saw_empty: bool = False  # the failure's exception names an empty string
    keys: tuple[str, ...] = ()  # string keys the failing lines read (``result['id']``)
    got_nothing: bool = False  # the failed assertion's actual value is None or empty

    def wanted_tokens(self, source: str) -> tuple[str, ...]:
        """Words of an expected value (either diff side) that the source text lacks."""
        words: dict[str, None] = {}
        for text in (*self.diff_plus, *self.diff_minus, *(s for pair in self.sides for s in pair)):
            for w in _WORD.findall(_literal_text(text)):
                w = w.strip("'")
                if 1 < len(w) <= 40 and w not in source:
                    words.setdefault(w, None)
        return tuple(words)


def _literal_text(text: str) -> str:
    try:
        v = literal_value(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    if isinstance(v, str):
        return v
    if isinstance(v, list | tuple | set):
        return " ".join(str(x) for x in v)
    return text


def parse_hints(output: str, is_test: object = None) -> FailureHints:
    """Hints from a test run's output (pytest's long form, or a plain traceback)."""
    counts: dict[str, int] = {}
    found = raised(output)
    # pytest's E lines first, then a plain traceback's: the order among equal counts
    for r in [r for r in found if r.marked] + [r for r in found if not r.marked]:
        if r.short[:1].isupper():
            counts[r.short] = counts.get(r.short, 0) + 1
    excs = tuple(sorted(counts, key=lambda k: -counts[k]))
    locs: dict[tuple[str, int], None] = {}
    for loc in locations(output):
        locs.setdefault((loc.path, loc.line), None)
    minus, plus = assertion_diff(output)
    # an empty string reached as a value: ``KeyError: ''``, ``invalid literal for int() ...: ''``
    empty = any(f"{r.type}: {r.message}".endswith(": ''") for r in found)
    return FailureHints(
        excs,
        tuple(locs),
        assertion_sides(output),
        minus,
        plus,
        saw_none=bool(_NONE_VALUE.search(output)),
        saw_empty=empty,
        keys=_read_keys(output),
        got_nothing=bool(_GOT_NOTHING.search(output)),
    )


def _read_keys(output: str) -> tuple[str, ...]:
    """Keys read on the lines pytest marks as failing (``>``), in order, each once."""
    keys: dict[str, None] = {}
    for line in output.splitlines():
        if line.startswith(">"):
            for m in _READ_KEY.finditer(line):
                keys.setdefault(m.group(2), None)
    return tuple(keys)


def repo_path(path: str, listed: Collection[str]) -> str | None:
    """The repository's own path for one a run printed (relative, or absolute in a copy:
    ``/tmp/copy/pkg/m.py`` -> ``pkg/m.py``); None when it is none of the listed files."""
    if path in listed:
        return path
    parts = path.replace("\\", "/").split("/")
    for i in range(1, len(parts)):
        tail = "/".join(parts[i:])
        if tail in listed:
            return tail
    return None


def _constants(test_sources: list[str]) -> Iterator[object]:
    """The value of every constant of the test files that parse."""
    for src in test_sources:
        try:
            tree = parse_python(src)
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant):
                yield node.value


def test_literals(test_sources: list[str]) -> frozenset[str]:
    """String constants of the failing tests' files (a patch adding one may overfit)."""
    out: set[str] = set()
    for v in _constants(test_sources):
        if isinstance(v, str) and v:
            out.add(v)
            out.update(w for w in v.split() if len(w) > 1)
    return frozenset(out)


def test_numbers(test_sources: list[str]) -> frozenset[str]:
    """Numbers of the failing tests' files other than 0, 1, -1 and 2, by ``repr``: a new
    comparison with one special-cases the test (:mod:`fixbugs.repair.demotions`)."""
    return frozenset(
        repr(v)
        for v in _constants(test_sources)
        if isinstance(v, int | float) and not isinstance(v, bool) and v not in (0, 1, -1, 2)
    )


def printed_literal_lines(
    sources: Iterable[tuple[str, ast.AST]],
    text: str,
    *,
    min_len: int = 6,
    max_uses: int = 3,
    limit: int = 4,
) -> list[tuple[str, int]]:
    """(path, line) of the string literals that a failing run's ``text`` holds verbatim.

    A failed assertion prints what the code produced: a distinctive literal
    of the code in that output (``"  (original)"`` in a diff header) points
    at the lines that wrote it, whatever their static rank. A literal written
    in more than ``max_uses`` places says nothing; rarer and longer first.
    """
    if not text:
        return []
    uses: dict[str, list[tuple[str, int]]] = {}
    for path, tree in sources:
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                v = node.value
                if len(v.strip()) >= min_len and "\n" not in v and v in text:
                    uses.setdefault(v, []).append((path, node.lineno))
    order = sorted((len(at), -len(v), v) for v, at in uses.items() if len(at) <= max_uses)
    out: list[tuple[str, int]] = []
    for _, _, v in order:
        out.extend(at for at in uses[v] if at not in out)
    return out[:limit]
