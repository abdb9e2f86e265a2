"""A fix held only to "the report's code no longer fails" is not validated (issue 44, item 2).

A report whose only reproduction is its own snippet, and which does not say
what the code should print, can only show that the failure is gone: any fix
that changes the output passes the snippet's gate. The lead then fails the
``weak_oracle`` check (``passes tests``); the same report saying what it
expected is held to that value and can be validated. No model, a real sandbox.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from userpython import user_python

from fixbugs.run.agent import run_from_paths
from fixbugs.run.record import Reproduction
from fixbugs.stages.lead import oracle_check

STATS = "def mean(xs):\n    return sum(xs) / (len(xs) + 1)\n"
SESSION = textwrap.dedent(
    """\
    # mean() is wrong

    ```pycon
    >>> from stats import mean
    >>> mean([2, 4])
    2.0
    ```

    """
)


def test_only_a_snippet_without_an_expected_output_is_a_weak_oracle() -> None:
    snippet = Reproduction("python -c ...", "snippet", "confirmed", "s", script="x")
    weak = oracle_check(snippet)
    assert weak is not None and weak.kind == "weak_oracle"
    assert oracle_check(Reproduction("c", "snippet", "confirmed", "s", expected="3.0")) is None
    for origin in ("given", "report", "discovered"):
        assert oracle_check(Reproduction("pytest t.py", origin, "confirmed", "s")) is None


def _repo(tmp_path: Path, report: str) -> Path:
    repo = tmp_path / "proj"
    (repo / "tests").mkdir(parents=True)
    (repo / "stats.py").write_text(STATS)
    (repo / "tests" / "test_stats.py").write_text(
        "from stats import mean\n\n\ndef test_empty_total():\n    assert mean([0]) == 0\n"
    )
    (repo / "report.md").write_text(report)
    return repo


@pytest.mark.needs_namespaces
@pytest.mark.parametrize(
    ("says", "level"),
    [
        ("It prints the wrong mean.\n", "passes_tests"),
        ("It prints the wrong mean: I expected `3.0`.\n", "validated"),
    ],
)
async def test_the_verdict_rests_on_what_the_report_says_should_happen(
    tmp_path: Path, says: str, level: str
) -> None:
    repo = _repo(tmp_path, SESSION + says)
    report = await run_from_paths(
        report=repo / "report.md", repo=repo, use_model=False, python=user_python()
    )
    d = report.to_dict()
    assert d["reproduction"]["origin"] == "snippet", d["reproduction"]
    assert d["verdict"] == level, d["validation"]
    kinds = [c["kind"] for c in d["validation"]["failed_checks"]]
    assert ("weak_oracle" in kinds) == (level == "passes_tests"), kinds
    if level == "validated":
        assert d["reproduction"]["expected"] == "3.0"
