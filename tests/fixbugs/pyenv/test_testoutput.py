"""The one reader of a test run's text, on the shapes pytest 9 and CPython 3.11 print.

The outputs below were printed by ``pytest -rA``, ``pytest -v --tb=short``,
``pytest -v --tb=long`` and ``python -m unittest -v`` on a small test file
(three parametrized cases whose ids hold a space, ``::`` and ``[ ]``, a
``KeyError`` raised one call down, a passing test that prints), and by
pytest on a test module that does not import; the timings and the header
are cut.
"""

from __future__ import annotations

import pytest

from fixbugs.localize.traceback import parse_failure
from fixbugs.pyenv.raised import (
    Raised,
    assertion_sides,
    exception_line,
    final_exception,
    frames,
    is_exception_name,
    locations,
    raised,
)
from fixbugs.pyenv.testid import TestId
from fixbugs.pyenv.testoutput import (
    Counts,
    collect_error,
    collection_error_in,
    failures,
    import_error_in,
    parse_outcomes,
    pytest_counts,
    summary_ids,
    unittest_failed,
    unittest_import_error,
    unittest_ran,
)

PARAM = "tests/test_demo.py::TestThing::test_param"
FAILED_IDS = frozenset({f"{PARAM}[x::y]", "tests/test_demo.py::test_key"})

LONG_FAILURES = """\
=================================== FAILURES ===================================
__________________________ TestThing.test_param[x::y] __________________________

self = <test_demo.TestThing object at 0x7f1900a9db90>, arg = 'x::y'

    @pytest.mark.parametrize("arg", ["a b", "x::y", "k:v [z]"])
    def test_param(self, arg):
>       assert arg != "x::y"
E       AssertionError: assert 'x::y' != 'x::y'

tests/test_demo.py:6: AssertionError
___________________________________ test_key ___________________________________

    def test_key():
>       helper({})

tests/test_demo.py:12: \n\
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n\

d = {}

    def helper(d):
>       return d["id"]
               ^^^^^^^
E       KeyError: 'id'

tests/test_demo.py:9: KeyError
"""
SUMMARY = f"""\
=========================== short test summary info ============================
FAILED {PARAM}[x::y] - AssertionError: asse...
FAILED tests/test_demo.py::test_key - KeyError: 'id'
========================= 2 failed, 3 passed in 0.77s ==========================
"""
VERBOSE = f"""\
collecting ... collected 5 items

{PARAM}[a b] PASSED                    [ 20%]
{PARAM}[x::y] FAILED                   [ 40%]
{PARAM}[k:v [z]] PASSED                [ 60%]
tests/test_demo.py::test_key FAILED                                      [ 80%]
tests/test_demo.py::test_ok PASSED                                       [100%]

"""
RA = f"""\
collected 5 items

tests/test_demo.py .F.F.                                                 [100%]

{LONG_FAILURES}\
==================================== PASSES ====================================
___________________________________ test_ok ____________________________________
----------------------------- Captured stdout call -----------------------------
hello
=========================== short test summary info ============================
PASSED {PARAM}[a b]
PASSED {PARAM}[k:v [z]]
PASSED tests/test_demo.py::test_ok
{SUMMARY.split(chr(10), 1)[1]}"""
SHORT = f"""\
{VERBOSE}\
=================================== FAILURES ===================================
__________________________ TestThing.test_param[x::y] __________________________
tests/test_demo.py:6: in test_param
    assert arg != "x::y"
E   AssertionError: assert 'x::y' != 'x::y'
___________________________________ test_key ___________________________________
tests/test_demo.py:12: in test_key
    helper({{}})
tests/test_demo.py:9: in helper
    return d["id"]
           ^^^^^^^
E   KeyError: 'id'
{SUMMARY}"""
LONG = VERBOSE + LONG_FAILURES + SUMMARY
UNITTEST = """\
test_a (test_u.T.test_a) ... FAIL
test_b (test_u.T.test_b) ... ERROR
test_c (test_u.T.test_c) ... ok

======================================================================
ERROR: test_b (test_u.T.test_b)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/tor/tests/test_u.py", line 6, in test_b
    {}["k"]
    ~~^^^^^
KeyError: 'k'

======================================================================
FAIL: test_a (test_u.T.test_a)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/tor/tests/test_u.py", line 4, in test_a
    self.assertEqual(1, 2)
AssertionError: 1 != 2

----------------------------------------------------------------------
Ran 3 tests in 0.001s

FAILED (failures=1, errors=1)
"""
COLLECTION = """\
collecting ... collected 0 items / 1 error

==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_broken.py _____________________
ImportError while importing test module '/tmp/tor/tests/test_broken.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
/usr/lib/python3.11/importlib/__init__.py:126: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/test_broken.py:1: in <module>
    import nosuchmodule
E   ModuleNotFoundError: No module named 'nosuchmodule'
=========================== short test summary info ============================
ERROR tests/test_broken.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.82s ===============================
"""


@pytest.mark.parametrize(
    "text",
    [
        f"{PARAM}[a b]",
        f"{PARAM}[x::y]",
        f"{PARAM}[k:v [z]]",
        "tests/test_demo.py::test_key",
        "tests/test_demo.py",
        "test_u.T.test_a",
        "a.py::t[unclosed",
        "a.py::",
    ],
)
def test_a_test_id_reads_back_as_written(text: str) -> None:
    assert str(TestId.parse(text)) == text


def test_a_test_id_keeps_colons_and_brackets_of_its_parameters_in_them() -> None:
    tid = TestId.parse(f"{PARAM}[k:v [z]]")
    assert tid == TestId("tests/test_demo.py", ("TestThing", "test_param"), "k:v [z]")
    assert (tid.function, tid.heading) == ("test_param", "TestThing.test_param[k:v [z]]")
    odd = TestId.parse(f"{PARAM}[x::y]")
    assert odd.names == ("TestThing", "test_param") and odd.params == "x::y"
    assert TestId.parse("test_u.T.test_a") == TestId("test_u.T.test_a")
    assert TestId.parse("tests/t.py").function == ""


def test_a_test_is_within_its_class_file_and_unparametrized_name_only() -> None:
    case = TestId.parse(f"{PARAM}[x::y]")
    assert case.within(TestId.parse(PARAM))
    assert case.within(TestId.parse("tests/test_demo.py::TestThing"))
    assert case.within(TestId.parse("tests/test_demo.py"))
    assert case.within(case)
    assert not case.within(TestId.parse(f"{PARAM}[a b]"))
    assert not TestId.parse(f"{PARAM}_more").within(TestId.parse(PARAM))
    assert not TestId.parse(PARAM).within(case)


@pytest.mark.parametrize("output", [RA, SHORT, LONG], ids=["rA", "short", "long"])
def test_pytest_failures_their_ids_and_counts_whatever_the_traceback_style(output: str) -> None:
    found = failures("pytest", output)
    assert [f.name for f in found] == ["TestThing.test_param[x::y]", "test_key"]
    assert [final_exception(f.text) for f in found] == [
        ("AssertionError", "assert 'x::y' != 'x::y'"),
        ("KeyError", "'id'"),
    ]
    assert summary_ids(output) == FAILED_IDS
    assert pytest_counts(output) == Counts(failed=2, passed=3)
    assert collection_error_in(output) is None and collect_error(output) is None
    # the failing sections are the ids' headings
    assert {TestId.parse(t).heading for t in FAILED_IDS} == {f.name for f in found}


def test_a_passing_tests_captured_output_under_ra_is_no_failure() -> None:
    assert "test_ok" not in [f.name for f in failures("pytest", RA)]
    assert "hello" not in "".join(f.text for f in failures("pytest", RA))


def test_verbose_outcomes_of_parametrized_ids_with_spaces_colons_and_brackets() -> None:
    assert parse_outcomes(SHORT) == {
        f"{PARAM}[a b]": "passed",
        f"{PARAM}[x::y]": "failed",
        f"{PARAM}[k:v [z]]": "passed",
        "tests/test_demo.py::test_key": "failed",
        "tests/test_demo.py::test_ok": "passed",
    }
    assert parse_outcomes(RA) == {}  # -rA's summary puts the outcome first: not per-test lines


def test_the_raising_location_and_frames_of_short_and_long_tracebacks() -> None:
    crash = [(c.path, c.line, c.name) for c in locations(LONG) if c.kind == "crash"]
    assert crash == [
        ("tests/test_demo.py", 6, "AssertionError"),
        ("tests/test_demo.py", 9, "KeyError"),
    ]
    # innermost first: the KeyError's line, then its caller, then the other failure's line
    assert frames(LONG) == [
        ("tests/test_demo.py", 9),
        ("tests/test_demo.py", 12),
        ("tests/test_demo.py", 6),
    ]
    assert frames(SHORT) == frames(LONG)
    assert assertion_sides(LONG) == ()  # a != is not an == with two sides
    assert assertion_sides("E       AssertionError: assert 3 == 4\n") == (("3", "4"),)


def test_unittest_sections_exceptions_counts_and_outcomes() -> None:
    found = failures("unittest", UNITTEST)
    assert [f.name for f in found] == ["test_b (test_u.T.test_b)", "test_a (test_u.T.test_a)"]
    assert [final_exception(f.text) for f in found] == [
        ("KeyError", "'k'"),
        ("AssertionError", "1 != 2"),
    ]
    assert (unittest_ran(UNITTEST), unittest_failed(UNITTEST)) == (3, 2)
    assert unittest_import_error(UNITTEST) is None
    assert parse_outcomes(UNITTEST) == {
        "test_u.T.test_a": "failed",
        "test_u.T.test_b": "error",
        "test_u.T.test_c": "passed",
    }
    assert frames(UNITTEST) == [("/tmp/tor/tests/test_u.py", 4), ("/tmp/tor/tests/test_u.py", 6)]
    assert unittest_failed(UNITTEST.replace("FAILED (failures=1, errors=1)", "OK")) is None


def test_a_collection_error_names_its_module_and_first_error_line() -> None:
    assert collection_error_in(COLLECTION) == "tests/test_broken.py"
    assert import_error_in(COLLECTION) == "/tmp/tor/tests/test_broken.py"
    assert collect_error(COLLECTION) == "ModuleNotFoundError: No module named 'nosuchmodule'"
    assert pytest_counts(COLLECTION) == Counts(failed=1, passed=0)
    assert failures("pytest", COLLECTION)[0].name == "tests/test_broken.py"  # the summary's


def test_one_set_of_exception_names_for_every_shape_of_line() -> None:
    text = (
        "E   requests.exceptions.HTTPError: 404\n"
        "socket.gaierror: [Errno -2] Name or service not known\n"
        "ValueError\n"
        "  IndentedError: not a traceback's last line\n"
        "The ValueError in prose\n"
        "E   DeprecationWarning: old\n"
    )
    assert raised(text) == [
        Raised("requests.exceptions.HTTPError", "404", marked=True),
        Raised("socket.gaierror", "[Errno -2] Name or service not known", marked=False),
        Raised("ValueError", "", marked=False),
        Raised("DeprecationWarning", "old", marked=True),
    ]
    assert raised(text)[0].short == "HTTPError"
    assert [is_exception_name(n) for n in ("KeyError", "pkg.Oops", "Error", "VersionConflict")] == [
        True,
        False,
        False,
        True,
    ]


def test_a_reports_traceback_reads_its_exception_with_the_same_names() -> None:
    assert exception_line("socket.gaierror: [Errno -2] x") == Raised(
        "socket.gaierror", "[Errno -2] x", marked=False
    )
    assert exception_line("  File 'x.py', line 1") is None
    report = 'Traceback (most recent call last):\n  File "pkg/a.py", line 3, in f\n    g()\n'
    bare = parse_failure(report + "StopIteration\n")
    assert (bare.exception_type, bare.exception_message) == (None, None)  # not an exception name
    named = parse_failure(report + "pkg_resources.VersionConflict: (six 1.10)\n")
    assert (named.exception_type, named.exception_message) == (
        "pkg_resources.VersionConflict",
        "(six 1.10)",
    )
    assert parse_failure(report + "KeyboardInterrupt\n").exception_type == "KeyboardInterrupt"
