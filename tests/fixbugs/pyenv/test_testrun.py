"""Test commands understood (which tests, a verbose variant), and per-test outcomes read back."""

from pathlib import Path

from fixbugs.pyenv.testoutput import parse_outcomes
from fixbugs.pyenv.testrun import files_of_tests, parse_test_command


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


def test_the_tests_a_command_names_whatever_runs_them():
    c = parse_test_command("tox -e py -- 'tests/t.py::test_b[x y]' tests/u.py -k slow")
    assert c.runner == "other" and c.files == ()
    assert c.test_ids == ("tests/t.py::test_b[x y]", "tests/u.py")
    assert parse_test_command("./run_tests.py -v").test_ids == ()  # the program, not a test
    assert files_of_tests(["a/test_x.py::t[1]", "a/test_x.py::u", "b.py", "-x", "no:cache"]) == (
        "a/test_x.py",
        "b.py",
    )


def test_a_command_run_with_a_chosen_interpreter():
    py = Path("/opt/py/bin/python")
    c = parse_test_command("python -m pytest 'tests/t.py::test_b[x y]'")
    assert c.with_python(py) == ["/opt/py/bin/python", "-m", "pytest", "tests/t.py::test_b[x y]"]
    assert parse_test_command("python3 -m unittest t").with_python(py)[0] == str(py)
    assert parse_test_command("pytest tests").with_python(py) == ["pytest", "tests"]


def test_a_command_cut_short_is_read_as_words():
    c = parse_test_command("python -m pytest 'tests/t.py")
    assert c.runner == "other" and c.targets == () and c.files == ()
    assert c.argv == ("python", "-m", "pytest", "'tests/t.py")


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
