"""Which of a PR's tests make a case: fail before the fix, pass after it.

The candidates are the test functions the PR's test diff adds or changes.
A candidate that fails (or errors) on the base tree with the PR's tests and
passes once the gold patch is applied is a failing test of the case; a
module that does not even import on the base tree (the tests import a name
the fix adds) fails all of its candidates. The other tests of the same
modules that pass both times are ``pass_to_pass``. No failing test left is
a skip, and the reason says which way it went.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fixbugs.eval.pool.testruns import ModuleRun
from fixbugs.pyenv.testid import TestId

__all__ = ["Selection", "select_tests"]


@dataclass(frozen=True, slots=True)
class Selection:
    """The case's tests, or ``reason`` (one line) why there is no case."""

    failing: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    reason: str | None = None


def select_tests(
    candidates: Sequence[str], before: Sequence[ModuleRun], after: Sequence[ModuleRun]
) -> Selection:
    for run in after:
        if run.collect_error is not None:
            return Selection(
                reason=f"collection error at base + gold patch in {run.module}: {run.collect_error}"
            )
    was = {t: o for r in before for t, o in r.outcomes.items()}
    now = {t: o for r in after for t, o in r.outcomes.items()}
    broken = {r.module for r in before if r.collect_error is not None}
    failing = tuple(
        c
        for c in candidates
        if now.get(c) == "passed"
        and (TestId.parse(c).path in broken or was.get(c) in ("failed", "error"))
    )
    if not failing:
        return Selection(reason=_why_none(candidates, was, now, broken))
    chosen = set(failing)
    p2p = tuple(
        t for t, o in now.items() if o == "passed" and was.get(t) == "passed" and t not in chosen
    )
    return Selection(failing, p2p)


def _why_none(
    candidates: Sequence[str], was: Mapping[str, str], now: Mapping[str, str], broken: set[str]
) -> str:
    if not any(c in now for c in candidates):
        return f"the PR's tests are not in pytest's output (first: {candidates[0]})"
    if not broken and all(was.get(c) in ("passed", "skipped") for c in candidates if c in now):
        return "PR's tests pass at base"
    bad = [c for c in candidates if now.get(c) != "passed"]
    return f"the PR's failing tests do not pass with the gold patch either ({bad[0]})"
