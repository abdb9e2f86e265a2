from fixbugs.index import is_test_path
from fixbugs.localize.traceback import parse_failure, relativize

FILES = {"pkg/core.py", "pkg/util.py", "pkg/__init__.py", "tests/test_core.py"}

CPYTHON = """\
Traceback (most recent call last):
  File "/home/user/proj/tests/test_core.py", line 10, in test_total
    assert total([1]) == 1
  File "/home/user/proj/pkg/core.py", line 5, in total
    return helper(xs)
  File "/home/user/venv/lib/python3.8/site-packages/lib/__init__.py", line 3, in wrap
    return f()
  File "/home/user/proj/pkg/util.py", line 9, in helper
    return xs[1]
IndexError: list index out of range
"""

PYTEST_LONG = """\
=================================== FAILURES ===================================
__________________________ TestCore.test_total ___________________________

    def test_total(self):
>       assert total([1]) == 1

tests/test_core.py:10:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
/home/user/venv/lib/python3.8/site-packages/decorator/__init__.py:247: in fun
    return caller(func, *(extras + args), **kw)
pkg/core.py:5: in total
    return helper(xs)
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

xs = [1]

    def helper(xs):
>       return xs[1]
E       IndexError: list index out of range

pkg/util.py:9: IndexError
=============================== warnings summary ===============================
pkg/core.py:2
  /home/user/proj/pkg/core.py:2: DeprecationWarning: invalid escape sequence
=========================== 1 failed in 0.06 seconds ===========================
FAILED tests/test_core.py::TestCore::test_total
"""


def test_cpython_traceback_maps_paths_and_drops_installed_packages():
    parsed = parse_failure(CPYTHON, FILES)
    [tb] = parsed.tracebacks
    assert [(f.path, f.line, f.function) for f in tb] == [
        ("tests/test_core.py", 10, "test_total"),
        ("pkg/core.py", 5, "total"),
        (None, 3, "wrap"),
        ("pkg/util.py", 9, "helper"),
    ]
    assert tb[-1].depth == 0 and tb[0].depth == 3
    assert tb[-1].text == "return xs[1]"
    assert parsed.exception_type == "IndexError"
    assert parsed.exception_message == "list index out of range"
    assert [f.path for f in parsed.project_frames()] == ["pkg/core.py", "pkg/util.py"]


def test_pytest_long_and_short_frames_warnings_and_test_ids():
    parsed = parse_failure(PYTEST_LONG, FILES)
    [tb] = parsed.tracebacks
    assert [(f.path, f.line, f.function) for f in tb] == [
        ("tests/test_core.py", 10, "test_total"),
        (None, 247, "fun"),
        ("pkg/core.py", 5, "total"),
        ("pkg/util.py", 9, "helper"),
    ]
    assert tb[-1].text == "return xs[1]"
    assert parsed.exception_type == "IndexError"
    assert [(w.path, w.line) for w in parsed.warnings] == [("pkg/core.py", 2)]
    assert parsed.failing_tests == ("tests/test_core.py::TestCore::test_total",)


def test_relativize_needs_more_than_a_bare_name_from_absolute_paths():
    assert relativize("/elsewhere/__init__.py", FILES) is None
    assert relativize("/home/user/proj/pkg/__init__.py", FILES) == "pkg/__init__.py"
    assert relativize("./pkg/core.py", FILES) == "pkg/core.py"
    assert relativize("pkg/core.py", None) == "pkg/core.py"
    assert relativize("/usr/lib/python3.11/json/decoder.py", None) is None


def test_test_paths():
    assert is_test_path("tests/rules/test_x.py") and is_test_path("pkg/x_test.py")
    assert is_test_path("conftest.py") and not is_test_path("pkg/testing_tools.py")


def test_no_traceback_gives_empty_result():
    parsed = parse_failure("it just prints the wrong total", FILES)
    assert parsed.tracebacks == () and parsed.exception_type is None
