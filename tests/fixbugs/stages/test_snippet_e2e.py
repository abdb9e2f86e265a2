"""A report whose only reproduction is its own snippet: reproduced, localized, fixed, validated.

The synthetic project has a wrong comparison and no test of it; the report
pastes a ``>>>`` session and the output it printed, which it calls wrong.
The agent (no model, a real sandbox) must run the session, see that output,
rank the buggy file first with SBFL from the snippet's coverage, and hold
the fixes it tries to the snippet's gate in fresh forks.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from userpython import user_python

from fixbugs.run.agent import run_from_paths

pytestmark = pytest.mark.needs_namespaces

SHOP = textwrap.dedent(
    """\
    def total(prices, discount):
        if discount > 100:
            raise ValueError("discount over 100%")
        return sum(prices) * (100 - discount) / 100


    def checkout(prices, discount=0):
        if len(prices) < 0:
            raise ValueError("empty basket")
        return round(total(prices, discount), 2)
    """
)
UNRELATED = "def unrelated():\n    return 1\n"

REPORT = textwrap.dedent(
    """\
    # checkout accepts an empty basket

    ```pycon
    >>> from shop import checkout
    >>> checkout([])
    0.0
    ```

    An empty basket should raise "empty basket", it returns 0.0 instead.
    """
)


def write_repo(tmp_path: Path, report: str) -> Path:
    repo = tmp_path / "proj"
    (repo / "tests").mkdir(parents=True)
    (repo / "shop.py").write_text(SHOP)
    (repo / "other.py").write_text(UNRELATED)
    (repo / "tests" / "test_other.py").write_text(
        "from other import unrelated\n\n\ndef test_unrelated():\n    assert unrelated() == 1\n"
    )
    (repo / "tests" / "test_shop.py").write_text(
        "from shop import total\n\n\ndef test_total():\n    assert total([10, 10], 50) == 10\n"
    )
    (repo / "report.md").write_text(report)
    return repo


async def test_the_reports_session_reproduces_and_localizes(tmp_path: Path) -> None:
    repo = write_repo(tmp_path, REPORT)
    report = await run_from_paths(
        report=repo / "report.md", repo=repo, use_model=False, python=user_python()
    )
    d = report.to_dict()
    rep = d["reproduction"]
    assert rep["status"] == "confirmed" and rep["origin"] == "snippet", rep
    assert "prints the output the report shows" in rep["summary"]
    # the report keeps the script, and shows it to a person instead of the encoded gate
    assert rep["script"] and "checkout([])" in rep["script"], rep
    shown = report.markdown()
    assert "checkout([])" in shown and rep["command"] not in shown
    assert d["ranked_files"][0]["path"] == "shop.py", d["ranked_files"][:3]
    assert any(r.startswith("Ochiai") for r in d["ranked_files"][0]["reasons"]), d["ranked_files"]
    # validation ran the snippet's gate in fresh forks: fixes that leave it printing 0.0 fail it
    rejected = d["validation"]["rejected"]
    assert rejected and all("still fails" in r for r in rejected), d["validation"]


async def test_a_snippet_that_prints_something_else_is_no_reproduction(tmp_path: Path) -> None:
    repo = write_repo(tmp_path, REPORT.replace("0.0\n", "12.5\n"))
    report = await run_from_paths(
        report=repo / "report.md", repo=repo, use_model=False, python=user_python()
    )
    rep = report.to_dict()["reproduction"]
    assert (rep["status"], rep["origin"], rep["confirmed"]) == ("passes", "snippet", False), rep
    assert "does not print the output the report shows" in rep["summary"]
