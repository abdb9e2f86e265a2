"""Test commands understood (which tests, a verbose variant), and per-test outcomes read back."""

from fixbugs.pyenv.testrun import parse_outcomes, parse_test_command


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
