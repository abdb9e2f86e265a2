"""A failure with an environment signature is "could not run", never "confirmed".

Synthetic outputs of pytest, unittest and a plain script: a run whose every
failure comes from the machine (a missing module, a distribution not installed, a
missing user or home, no network, a permission refused outside the copy) could not run;
a run with one real failure beside them failed; the same exception types for reasons of the
code's own are failures.
"""

from __future__ import annotations

import pytest

from fixbugs.pyenv.failures import environment_signature
from fixbugs.pyenv.raised import final_exception
from fixbugs.pyenv.testoutput import failure_excerpt, failures
from fixbugs.pyenv.testverdict import classify_run


def pytest_output(*sections: tuple[str, str]) -> str:
    """pytest 3.10's long form: one ``____ name ____`` section per (name, E lines)."""
    body = "".join(
        f"{'_' * 20} {name} {'_' * 20}\n\n    def {name}():\n>       run()\n\n"
        f"tests/test_a.py:3: \n{lines}\npkg/a.py:9: Error\n"
        for name, lines in sections
    )
    return (
        "collected 2 items\n\ntests/test_a.py FF\n\n"
        f"{'=' * 20} FAILURES {'=' * 20}\n{body}"
        f"{'=' * 20} {len(sections)} failed in 0.05 seconds {'=' * 20}\n"
    )


GETPWUID = "E       KeyError: 'getpwuid(): uid not found: 1515802016'"
NO_HOME = "E       RuntimeError: Could not determine home directory."
NO_MODULE = "E       ModuleNotFoundError: No module named 'requests'"
NO_DIST = (
    "E       pkg_resources.DistributionNotFound: The 'thefuck' distribution was not found "
    "and is required by the application"
)
NO_METADATA = (
    "E       importlib.metadata.PackageNotFoundError: No package metadata was found for tqdm"
)
CONFLICT = (
    "E       pkg_resources.VersionConflict: (six 1.10.0 (/venv), Requirement.parse('six>=1.16'))"
)
NO_NAME = "E       socket.gaierror: [Errno -3] Temporary failure in name resolution"
UNREACHABLE = "E       OSError: [Errno 101] Network is unreachable"
REFUSED_REMOTE = (
    "E       requests.exceptions.ConnectionError: HTTPConnectionPool(host='example.com', "
    "port=80): Max retries exceeded (Caused by NewConnectionError('<conn>: Failed to "
    "establish a new connection: [Errno 111] Connection refused'))"
)
REFUSED_LOCAL = (
    "E       ConnectionRefusedError: [Errno 111] Connection refused: ('127.0.0.1', 8888)"
)
DENIED_SYSTEM = "E       PermissionError: [Errno 13] Permission denied: '/etc/thefuck'"
READ_ONLY = "E       OSError: [Errno 30] Read-only file system: '/usr/lib/python3/x.pyc'"
DENIED_TMP = "E       PermissionError: [Errno 13] Permission denied: '/tmp/pytest-0/ro/f'"
DENIED_COPY = "E       PermissionError: [Errno 13] Permission denied: 'data/locked.txt'"
REAL = "E       assert -1 == 3"
KEY = "E       KeyError: 'colour'"


@pytest.mark.parametrize(
    ("lines", "why"),
    [
        (GETPWUID, "no user or home"),
        (NO_HOME, "no user or home"),
        (NO_MODULE, "a module the tests need is missing"),
        (NO_DIST, "the project or a package it needs is not installed"),
        (NO_METADATA, "the project or a package it needs is not installed"),
        (CONFLICT, "the project or a package it needs is not installed"),
        (NO_NAME, "no network"),
        (UNREACHABLE, "no network"),
        (REFUSED_REMOTE, "no network"),
        (DENIED_SYSTEM, "permission refused outside the copy"),
        (READ_ONLY, "permission refused outside the copy"),
    ],
)
def test_an_environment_failure_could_not_run(lines: str, why: str) -> None:
    verdict = classify_run("pytest", 1, pytest_output(("test_a", lines), ("test_b", lines)))
    assert verdict.status == "could_not_run" and not verdict.reproduced
    assert verdict.reason.startswith("the failure comes from the test environment, not the code")
    assert why in verdict.reason and lines.split(None, 1)[1][:30] in verdict.reason


@pytest.mark.parametrize("lines", [REAL, KEY, REFUSED_LOCAL, DENIED_TMP, DENIED_COPY])
def test_the_codes_own_failures_still_fail(lines: str) -> None:
    # a refused connection to the test's own loopback server, a permission the test
    # took away in its temp folder or in the copy: the code's doing, not the machine's
    verdict = classify_run("pytest", 1, pytest_output(("test_a", lines)))
    assert verdict.status == "failed" and verdict.reproduced


def test_one_real_failure_beside_environment_failures_is_a_failure() -> None:
    output = pytest_output(("test_a", GETPWUID), ("test_b", REAL))
    assert classify_run("pytest", 1, output).status == "failed"
    assert [f.name for f in failures("pytest", output)] == ["test_a", "test_b"]


def test_the_final_exception_decides_not_a_cause_or_captured_output() -> None:
    chained = (
        f"{NO_MODULE}\n\nDuring handling of the above exception, another exception occurred:\n"
        "E       AssertionError: the fallback parser was used"
    )
    captured = f"{REAL}\n\ntests/test_a.py:4: AssertionError\n--- Captured stderr call ---\n"
    captured += "ModuleNotFoundError: No module named 'simplejson'\n"
    for text in (chained, captured):
        assert environment_signature(text) is None
    assert final_exception(chained) == ("AssertionError", "the fallback parser was used")
    assert final_exception(captured) == ("AssertionError", "assert -1 == 3")


UNITTEST = """test_a (tests.test_a.T) ... ERROR

======================================================================
ERROR: test_a (tests.test_a.T)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/repo/tests/test_a.py", line 5, in test_a
    home = Path.home()
  File "/usr/lib/python3.8/pathlib.py", line 380, in gethomedir
    return pwd.getpwuid(os.getuid()).pw_dir
KeyError: 'getpwuid(): uid not found: 1515802016'

----------------------------------------------------------------------
Ran 1 test in 0.001s

FAILED (errors=1)
"""
SCRIPT = """Traceback (most recent call last):
  File "repro.py", line 1, in <module>
    import yaml
ModuleNotFoundError: No module named 'yaml'
"""


def test_unittest_and_a_plain_command_are_judged_by_the_same_rule() -> None:
    verdict = classify_run("unittest", 1, UNITTEST)
    assert verdict.status == "could_not_run" and "no user or home" in verdict.reason
    real = UNITTEST.replace("KeyError: 'getpwuid(): uid not found: 1515802016'", "KeyError: 0")
    assert classify_run("unittest", 1, real).status == "failed"
    verdict = classify_run("other", 1, SCRIPT)
    assert verdict.status == "could_not_run" and "No module named 'yaml'" in verdict.reason
    assert classify_run("other", 1, SCRIPT.replace("ModuleNotFoundError", "ValueError")).reproduced


def test_pytest_summary_lines_are_read_when_no_section_is_printed() -> None:
    output = (
        "FAILED tests/test_a.py::test_a - KeyError: 'getpwuid(): uid not found: 7'\n"
        "===== 1 failed in 0.01s =====\n"
    )
    assert classify_run("pytest", 1, output).status == "could_not_run"


def test_the_failure_excerpt_keeps_the_traceback_a_warnings_summary_pushes_out_of_the_tail():
    warnings = "".join(
        f"pkg/extractor/site{i}.py:23\n  DeprecationWarning: invalid escape sequence \\.\n\n"
        for i in range(300)
    )
    output = (
        "============================= test session starts ==============================\n"
        "collected 1 item\n\ntest/test_utils.py F\n\n"
        "=================================== FAILURES ===================================\n"
        "___________________________ TestUtil.test_timestamps ___________________________\n"
        "    def test_timestamps(self):\n"
        ">       self.assertEqual(unified_timestamp('May 16, 2016 11:15 PM'), 1463440500)\n\n"
        "pkg/utils.py:1118: in unified_timestamp\n"
        "    return calendar.timegm(timetuple.timetuple())\n"
        "E   AttributeError: 'tuple' object has no attribute 'timetuple'\n"
        "=============================== warnings summary ===============================\n"
        + warnings
        + "=========================== short test summary info ============================\n"
        "FAILED test/test_utils.py::TestUtil::test_timestamps - AttributeError...\n"
        "======================= 1 failed, 513 warnings in 1.49s ========================\n"
    )
    excerpt = failure_excerpt("pytest", output)
    assert "pkg/utils.py:1118: in unified_timestamp" in excerpt
    assert "E   AttributeError: 'tuple' object has no attribute 'timetuple'" in excerpt
    assert "DeprecationWarning" not in excerpt
    assert excerpt.startswith("TestUtil.test_timestamps\n")
    # nothing marked: the output's end, within the limit
    assert failure_excerpt("other", "x" * 50 + "boom", limit=10) == "xxxxxxboom"
