"""Evaluation on reports as users write them: ``fixbugs eval --reports DIR --no-test``.

The dev cases' own reports are pytest output for a named failing test: the
easy case. A user's report is a title, what they typed, what they saw,
maybe a cut traceback from their installed copy, and no test. With
``--reports DIR`` each case's report is replaced by ``DIR/<case-id>.md``
(ours are in ``eval/reports``, written by the FixBugs team, see its
README); with ``--no-test`` the agent gets no test command, so it must
localize from the report alone (or find a test itself).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from fixbugs.errors import InputError
from fixbugs.eval.case import Case

__all__ = ["with_user_reports"]


def with_user_reports(cases: list[Case], reports: Path | None, *, no_test: bool) -> list[Case]:
    """``cases`` with their reports taken from ``reports`` and/or their test command dropped."""
    if reports is not None and not reports.is_dir():
        raise InputError(f"--reports {reports}: not a folder; give a folder of <case-id>.md files")
    out = []
    for case in cases:
        if reports is not None:
            path = reports / f"{case.id}.md"
            if not path.is_file():
                raise InputError(f"--reports {reports}: no report {path.name} for case {case.id}")
            case = replace(case, report=path.read_text(errors="replace"), report_file=path)
        if no_test:
            case = replace(case, test_command="")
        out.append(case)
    return out
