"""With no --test: a command from the report, from its traceback, or from the existing tests."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fixbugs.localize.traceback import Frame, ParsedFailure
from fixbugs.run.agent import run_from_paths
from fixbugs.stages.findtest import (
    command_from_frames,
    command_from_report,
    matching_failure,
)


def test_command_from_steps_section_and_inline_code():
    steps = "# Bug\n\n## Steps to reproduce\n\n1. run\n   $ pytest tests/test_a.py -k add\n"
    assert command_from_report(steps) == "pytest tests/test_a.py -k add"
    assert command_from_report("I ran `python -m pytest tests/t.py` and") == (
        "python -m pytest tests/t.py"
    )
    assert command_from_report("nothing to run here") is None


def test_command_from_a_fenced_block_under_how_to_reproduce():
    report = "# Bug\n\n## How to reproduce\n\n```\n$ python -m pytest tests/t.py::x\n```\n"
    assert command_from_report(report) == "python -m pytest tests/t.py::x"


def test_command_from_traceback_test_frames():
    files = {"tests/test_a.py", "pkg/a.py"}
    frames = (
        Frame("tests/test_a.py", 4, "test_add", "assert add(1, 2) == 3"),
        Frame("pkg/a.py", 2, "add", "return a - b"),
    )
    failure = ParsedFailure(tracebacks=(frames,))
    assert command_from_frames(failure, files) == (
        "python -m pytest -p no:cacheprovider tests/test_a.py -k test_add"
    )
    named = ParsedFailure(failing_tests=("tests/test_a.py::test_add",))
    assert command_from_frames(named, files).endswith("tests/test_a.py::test_add")
    assert command_from_frames(ParsedFailure(), files) is None


OUTPUT = """tests/test_calc.py::test_add FAILED
tests/test_calc.py::test_div FAILED
=================================== FAILURES ===================================
___________________________________ test_add ___________________________________
E       assert -1 == 3
___________________________________ test_div ___________________________________
E       ZeroDivisionError: division by zero
=========================== 2 failed in 0.05 seconds ===========================
"""


def test_matching_failure_keeps_the_test_whose_error_the_report_shows():
    failed = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_div"]
    failure = ParsedFailure(exception_type="ZeroDivisionError")
    assert matching_failure(failed, OUTPUT, failure, "") == "tests/test_calc.py::test_div"
    assert matching_failure(failed, OUTPUT, None, "it says 'assert -1 == 3'") == failed[0]
    assert matching_failure(failed, OUTPUT, ParsedFailure(exception_type="KeyError"), "") is None


@pytest.mark.needs_root
async def test_no_test_command_runs_existing_tests_and_keeps_the_matching_failure(tmp_path: Path):
    repo = tmp_path / "proj"
    (repo / "calc").mkdir(parents=True)
    (repo / "calc" / "__init__.py").write_text("")
    (repo / "calc" / "ops.py").write_text("def ratio(a, b):\n    return a / (b - b)\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_ops.py").write_text(
        "from calc.ops import ratio\n\n\ndef test_ratio():\n    assert ratio(4, 2) == 2\n\n\n"
        "def test_other():\n    assert True\n"
    )
    (repo / "report.md").write_text(
        "# ratio crashes\n\nCalling `calc.ops.ratio(4, 2)` raises\n"
        "`ZeroDivisionError: division by zero` instead of returning 2.\n"
    )
    report = await run_from_paths(
        report=repo / "report.md", repo=repo, use_model=False, python=Path(sys.executable)
    )
    rep = report.to_dict()["reproduction"]
    assert rep["origin"] == "discovered" and rep["status"] == "confirmed"
    assert rep["command"].endswith("tests/test_ops.py::test_ratio")


@pytest.mark.needs_root
async def test_nothing_found_says_static_evidence_only(tmp_path: Path):
    repo = tmp_path / "proj"
    (repo / "calc").mkdir(parents=True)
    (repo / "calc" / "ops.py").write_text("def ratio(a, b):\n    return a / b\n")
    (repo / "report.md").write_text("# ratio is slow\n\n`ratio` takes ages on big inputs.\n")
    report = await run_from_paths(
        report=repo / "report.md", repo=repo, use_model=False, python=Path(sys.executable)
    )
    rep = report.to_dict()["reproduction"]
    assert rep["status"] == "none" and not rep["confirmed"]
    assert "not reproduced" in rep["summary"] and "static evidence" in rep["summary"]
