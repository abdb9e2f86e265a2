"""Diffs and their scope, test-output parsing."""

from fixbugs.patch import Hunk, diff_hunks, make_diff, replace_lines
from fixbugs.stages.reproduce import command_from_report
from fixbugs.stages.validate import out_of_scope
from fixbugs.testrun import parse_outcomes, parse_test_command

SRC = "def f(x):\n    if x > 10 and ok:\n        return 'a > b'  # x > y\n    return x\n"


def test_diff_hunks_of_insertions_deletions_and_rewrites():
    new = replace_lines(SRC, 2, 2, "    if x >= 10:\n        log()\n")
    (h,) = diff_hunks(make_diff("m.py", SRC, new))
    assert (h.start, h.end) == (2, 2)
    ins = SRC.replace("    return x\n", "    x += 1\n    return x\n")
    (h,) = diff_hunks(make_diff("m.py", SRC, ins))
    assert h.end == h.start - 1 == 3  # a pure insertion before old line 4


def test_scope_check_rejects_tests_and_far_away_edits():
    regions = [("pkg/a.py", 10, 12)]
    assert out_of_scope([Hunk("pkg/a.py", 11, 11)], regions, 3) == []
    assert out_of_scope([Hunk("pkg/a.py", 14, 15)], regions, 3) == []
    assert "outside" in out_of_scope([Hunk("pkg/a.py", 30, 31)], regions, 3)[0]
    assert "outside" in out_of_scope([Hunk("pkg/b.py", 11, 11)], regions, 3)[0]
    assert "test file" in out_of_scope([Hunk("tests/test_a.py", 1, 1)], regions, 3)[0]


def test_test_commands_are_understood():
    c = parse_test_command("python -m pytest tests/t.py::T::test_a tests/u.py -x")
    assert c.runner == "pytest" and c.files == ("tests/t.py", "tests/u.py")
    assert c.verbose() == "python -m pytest -v -p no:cacheprovider tests/t.py tests/u.py"
    u = parse_test_command("python -m unittest tests.test_p.TestX.test_y")
    assert u.runner == "unittest" and u.verbose() == "python -m unittest -v tests.test_p"
    assert parse_test_command("make check").verbose() is None
    assert c.suite() == "python -m pytest -v -p no:cacheprovider tests"
    assert u.suite() == "python -m pytest -v -p no:cacheprovider tests"
    assert parse_test_command("python -m pytest test_top.py").suite() is None


def test_outcomes_from_pytest_and_unittest_output():
    out = parse_outcomes(
        "tests/t.py::test_a PASSED                [ 50%]\n"
        "tests/t.py::test_b[x y] FAILED\n"
        "test_c (tests.test_p.TestX.test_c) ... ok\n"
        "test_d (tests.test_p.TestX) ... FAIL\n"
    )
    assert out == {
        "tests/t.py::test_a": "passed",
        "tests/t.py::test_b[x y]": "failed",
        "tests.test_p.TestX.test_c": "passed",
        "tests.test_p.TestX.test_d": "failed",
    }


def test_reproduction_command_is_taken_from_the_report():
    report = "# Bug\n\n## How to reproduce\n\n```\n$ python -m pytest tests/t.py::x\n```\n"
    assert command_from_report(report) == "python -m pytest tests/t.py::x"
    assert command_from_report("no code here") is None
