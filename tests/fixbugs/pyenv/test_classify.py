"""classify_run: a non-zero exit is not a failing test."""

import pytest

from fixbugs.pyenv.testverdict import classify_run

FAILED_310 = """============================= test session starts ==============================
collected 1 item

tests/test_a.py F                                                        [100%]

=================================== FAILURES ===================================
___________________________________ test_add ___________________________________
>       assert add(1, 2) == 3
E       assert -1 == 3
tests/test_a.py:4: AssertionError
=========================== 1 failed in 0.05 seconds ===========================
"""
PASSED = (
    "tests/test_a.py .                                  [100%]\n\n===== 2 passed in 0.01s =====\n"
)
COLLECT = """==================================== ERRORS ====================================
______________________ ERROR collecting tests/test_a.py _______________________
ImportError while importing test module '/tmp/x/tests/test_a.py'.
E   ModuleNotFoundError: No module named 'calc'
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.07s ===============================
"""
SYNTAX = """______________________ ERROR collecting tests/test_a.py _______________________
E   SyntaxError: invalid syntax
=============================== 1 error in 0.07s ===============================
"""
USAGE = (
    "ERROR: not found: /tmp/x/tests/test_a.py::test_nope\n"
    "(no name '/tmp/x/tests/test_a.py::test_nope' in any of [<Module test_a.py>])\n\n"
    "===== no tests ran in 0.01s =====\n"
)
NO_TESTS = "collected 0 items\n\n===== no tests ran in 0.01s =====\n"
NO_PYTEST = "/tmp/venv/bin/python: No module named pytest\n"
UNITTEST_FAIL = (
    "test_add (tests.test_a.T) ... FAIL\n\n----\nRan 1 test in 0.001s\n\nFAILED (failures=1)\n"
)
UNITTEST_IMPORT = """test_a (unittest.loader._FailedTest) ... ERROR
ImportError: Failed to import test module: test_a
----------------------------------------------------------------------
Ran 1 test in 0.000s

FAILED (errors=1)
"""
UNITTEST_OK = "test_add (tests.test_a.T) ... ok\n\n----\nRan 1 test in 0.001s\n\nOK\n"


@pytest.mark.parametrize(
    ("runner", "rc", "output", "status", "reason"),
    [
        ("pytest", 1, FAILED_310, "failed", "1 test(s) failed"),
        ("pytest", 0, PASSED, "passed", "pass"),
        ("pytest", 2, COLLECT, "could_not_run", "fails to import"),
        (
            "pytest",
            1,
            COLLECT,
            "could_not_run",
            "fails to import",
        ),  # --continue-on-collection-errors
        ("pytest", 2, SYNTAX, "could_not_run", "collection error in tests/test_a.py"),
        ("pytest", 4, USAGE, "could_not_run", "usage error"),
        ("pytest", 5, NO_TESTS, "could_not_run", "no tests were collected"),
        ("pytest", 1, NO_PYTEST, "could_not_run", "pytest is not installed"),
        ("pytest", 3, "INTERNALERROR> boom\n", "could_not_run", "internal error"),
        ("pytest", 1, "Traceback ...\nKeyError: 'x'\n", "could_not_run", "before any test ran"),
        ("pytest", 127, "sh: python: not found\n", "could_not_run", "command not found"),
        ("unittest", 1, UNITTEST_FAIL, "failed", "1 test(s)"),
        ("unittest", 1, UNITTEST_IMPORT, "could_not_run", "fails to import"),
        ("unittest", 0, UNITTEST_OK, "passed", "pass"),
        ("unittest", 5, "\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n", "could_not_run", "no tests"),
        ("other", 1, "", "failed", "exit 1"),
        ("other", 0, "", "passed", "exits 0"),
    ],
)
def test_verdicts(runner, rc, output, status, reason):
    v = classify_run(runner, rc, output)
    assert v.status == status
    assert reason in v.reason
    assert v.reproduced is (status == "failed")


def test_timeout_never_counts_as_a_failure():
    v = classify_run("pytest", None, FAILED_310, timed_out=True)
    assert v.status == "could_not_run" and not v.reproduced
