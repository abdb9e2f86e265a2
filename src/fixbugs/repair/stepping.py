"""Whether a candidate that still fails has moved the failure forward.

A bug that needs two edits shows the first one only as a *different*
failure: the test gets past the assertion it stopped at (each missing
dictionary key of a result is one assertion further on), fewer of the
named tests fail, or the run now crashes elsewhere with another exception
(a pattern that now matches hands an empty argument on). Such a candidate
is a stepping stone: the repair builds its next edit on top of it
(:mod:`fixbugs.repair.followup`). Sans-IO: it reads the text of two runs
through the one reader of a test run (:mod:`fixbugs.pyenv.testoutput`,
:mod:`fixbugs.pyenv.raised`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fixbugs.index import is_test_path
from fixbugs.pyenv.raised import frames, locations, raised
from fixbugs.pyenv.testoutput import summary_ids

__all__ = ["FailurePoint", "Progress", "progress"]

Progress = Literal["strong", "weak"]

# exceptions an edit raises by breaking the code, not by getting further along
_BROKEN = frozenset(
    {
        "NameError",
        "UnboundLocalError",
        "SyntaxError",
        "IndentationError",
        "TabError",
        "ImportError",
        "ModuleNotFoundError",
        "RecursionError",
        "TypeError",
    }
)


@dataclass(frozen=True, slots=True)
class FailurePoint:
    """Where a failing run stopped: which tests, which line of the test, which crash."""

    failed: frozenset[str]  # test ids the summary names FAILED or ERROR
    test_line: tuple[str, int] | None  # the outermost test frame: the test's own line
    crash: tuple[str, int] | None  # the innermost frame
    exception: str | None  # the class name of what it raised (short)

    @classmethod
    def parse(cls, output: str) -> FailurePoint:
        where = frames(output)
        tests = [f for f in where if is_test_path(f[0])]
        # pytest's crash line names what the run ended with; else the last exception line
        crashes = [c.name for c in locations(output) if c.kind == "crash" and c.name[:1].isupper()]
        names = crashes or [r.short for r in raised(output) if r.short[:1].isupper()]
        return cls(
            failed=summary_ids(output),
            test_line=tests[-1] if tests else None,
            crash=where[0] if where else None,
            exception=names[-1] if names else None,
        )


def progress(before: FailurePoint, after: FailurePoint) -> Progress | None:
    """How far ``after`` (a candidate's run) got beyond ``before`` (the run it built on).

    ``strong``: fewer of the named tests fail (and none newly), or the one
    failing test stopped at a later line of its own. ``weak``: the same test
    line, but another exception or another crash site, and not an exception
    that says the edit broke the code (a ``NameError``, a ``TypeError``...).
    None: no sign of progress, or a sign of the contrary.
    """
    if after.failed - before.failed:
        return None  # a test that did not fail before fails now
    if after.failed and after.failed < before.failed:
        return "strong"
    single = len(after.failed) <= 1 and len(before.failed) <= 1
    if single and after.test_line and before.test_line:
        (path_a, line_a), (path_b, line_b) = after.test_line, before.test_line
        if path_a == path_b and line_a > line_b:
            return "strong"
        if path_a == path_b and line_a < line_b:
            return None
    if after.exception is None or after.exception in _BROKEN:
        return None
    if (after.exception, after.crash) != (before.exception, before.crash):
        return "weak"
    return None
