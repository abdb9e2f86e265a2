"""With no --test: a command from the report, from its traceback, or from the existing tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from userpython import user_python

from fixbugs.localize.traceback import Frame, ParsedFailure
from fixbugs.run.agent import run_from_paths
from fixbugs.stages.findtest import (
    FailureMatch,
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
tests/test_calc.py::test_home FAILED
=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(1, 2) == 3
E       assert -1 == 3

tests/test_calc.py:4: AssertionError
___________________________________ test_div ___________________________________

    def test_div():
>       assert ratio(4, 2) == 2

tests/test_calc.py:8:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

    def ratio(a, b):
>       return a / (b - b)
E       ZeroDivisionError: division by zero

calc/ops.py:2: ZeroDivisionError
___________________________________ test_home __________________________________

    def test_home():
>       assert config_dir().exists()

tests/test_calc.py:12:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

    def config_dir():
>       return Path.home() / ".calc"
E       KeyError: 'getpwuid(): uid not found: 1515802016'

calc/ops.py:6: KeyError
=========================== 3 failed in 0.05 seconds ===========================
"""
FAILED = [
    "tests/test_calc.py::test_add",
    "tests/test_calc.py::test_div",
    "tests/test_calc.py::test_home",
]


def test_a_failure_matches_the_reports_exception_type_and_message():
    failure = ParsedFailure(
        exception_type="ZeroDivisionError", exception_message="division by zero"
    )
    hit = matching_failure(FAILED, OUTPUT, failure, "")
    assert hit == FailureMatch(FAILED[1], "exception ZeroDivisionError: division by zero")
    # the same, said in the report's text rather than a pasted traceback
    said = "Calling `ratio(4, 2)` raises `ZeroDivisionError: division by zero`, not 2."
    assert matching_failure(FAILED, OUTPUT, None, said) == hit


def test_a_type_alone_a_quoted_phrase_or_another_message_is_not_a_match():
    assert (
        matching_failure(FAILED, OUTPUT, ParsedFailure(exception_type="ZeroDivisionError"), "")
        is None
    )
    # in the test's source only, not in what its failure says
    assert matching_failure(FAILED, OUTPUT, None, "I call `assert ratio(4, 2) == 2`") is None
    other = ParsedFailure(exception_type="ZeroDivisionError", exception_message="float modulo")
    assert matching_failure(FAILED, OUTPUT, other, "") is None


def test_a_failure_matches_the_output_or_the_input_the_report_shows():
    quoted = matching_failure(FAILED, OUTPUT, None, "it says 'assert -1 == 3'")
    assert quoted == FailureMatch(FAILED[0], "output 'assert -1 == 3' in its message")
    block = "```\n$ calc add 1 2\nassert -1 == 3\n```\n"
    assert matching_failure(FAILED, OUTPUT, None, block) == quoted
    # a report that shows an exception rules out a failure of another type
    typed = "it says 'assert -1 == 3', then ZeroDivisionError: float modulo"
    assert matching_failure(FAILED[:1], OUTPUT, None, typed) is None
    param = "tests/test_calc.py::test_add[one plus two]"
    output = OUTPUT.replace(" test_add ", " test_add[one plus two] ").replace("-1 == 3", "x")
    hit = matching_failure([param], output, None, "adding `one plus two` is wrong")
    assert hit == FailureMatch(param, "input 'one plus two' in its parameters")


def test_a_failure_matches_a_frame_of_the_project_the_reports_traceback_names():
    frames = (
        Frame("tests/test_calc.py", 8, "test_div", "assert ratio(4, 2) == 2"),
        Frame("calc/ops.py", 2, "ratio", "return a / (b - b)"),
    )
    failure = ParsedFailure(tracebacks=(frames,), exception_type="ZeroDivisionError")
    hit = matching_failure(FAILED, OUTPUT, failure, "")
    assert hit == FailureMatch(FAILED[1], "frame calc/ops.py in ratio")
    # the same frame with another exception is another failure
    typed = ParsedFailure(tracebacks=(frames,), exception_type="TypeError")
    assert matching_failure(FAILED, OUTPUT, typed, "") is None


def test_a_failure_from_the_machine_never_matches():
    # the false reproduction: a KeyError the report shows, and a test whose
    # KeyError is the sandbox uid's missing passwd entry, in a frame the report names
    frames = (Frame("calc/ops.py", 6, "config_dir", "return Path.home() / '.calc'"),)
    failure = ParsedFailure(
        tracebacks=(frames,),
        exception_type="KeyError",
        exception_message="'getpwuid(): uid not found: 1515802016'",
    )
    assert matching_failure(FAILED, OUTPUT, failure, "") is None
    assert matching_failure([FAILED[2]], OUTPUT, ParsedFailure(tracebacks=(frames,)), "") is None


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
    # what is checked is the reproduction: one repair candidate, not the default 300
    # (their sandboxed runs were most of this test's time)
    report = await run_from_paths(
        report=repo / "report.md",
        repo=repo,
        use_model=False,
        python=user_python(),
        repair_candidates=1,
    )
    rep = report.to_dict()["reproduction"]
    assert rep["origin"] == "discovered" and rep["status"] == "confirmed"
    assert rep["command"].endswith("tests/test_ops.py::test_ratio")
    said = "tests/test_ops.py::test_ratio fails as the report shows: same exception "
    assert said + "ZeroDivisionError: division by zero" in report.to_dict()["notes"]


@pytest.mark.needs_root
async def test_nothing_found_says_static_evidence_only(tmp_path: Path):
    repo = tmp_path / "proj"
    (repo / "calc").mkdir(parents=True)
    (repo / "calc" / "ops.py").write_text("def ratio(a, b):\n    return a / b\n")
    (repo / "report.md").write_text("# ratio is slow\n\n`ratio` takes ages on big inputs.\n")
    report = await run_from_paths(
        report=repo / "report.md", repo=repo, use_model=False, python=user_python()
    )
    rep = report.to_dict()["reproduction"]
    assert rep["status"] == "none" and not rep["confirmed"]
    assert "not reproduced" in rep["summary"] and "static evidence" in rep["summary"]
