"""``fixbugs eval --as-user``: a separate `fixbugs run` with only the case venv activated."""

from __future__ import annotations

from pathlib import Path

import pytest
from evalkit import calc_case

from fixbugs.eval.as_user import as_user_agent
from fixbugs.eval.run import load_cases, run_eval

pytestmark = pytest.mark.needs_root

FILES = {
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/test_calc.py": (
        "import sys\n\nfrom calc.ops import add\n\n\n"
        "def test_add():\n    assert sys.version_info[:2] == (3, 10)\n    assert add(1, 2) == 3\n"
    ),
}


def _case(root: Path) -> Path:
    report = "# tests/test_calc.py::test_add fails\n\nadd(1, 2) is -1\n"
    return calc_case(root, FILES, report, python="3.10")


async def test_as_user_run_finds_the_venv_and_truly_confirms(user_venv, wheels_env, tmp_path):
    cases = load_cases(_case(tmp_path / "cases"))
    results = await run_eval(
        cases,
        agent=as_user_agent(use_model=False, repair_budget_s=2),
        python_env=lambda version, reqs: user_venv.parent,
    )
    (r,) = results
    note = r.notes[-1]
    assert "(the case venv)" in note and "truly confirmed True" in note, note
    assert r.reproduction_confirmed is True  # the test asserts it ran under 3.10
    assert r.agent[0] == "calc/ops.py" and r.scores["agent"].top1
    assert r.region_hit and r.root_cause is not None and r.root_cause[0] == "calc/ops.py"
