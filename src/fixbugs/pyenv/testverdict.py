"""Did a test run really run the tests? A pure verdict from exit status and output.

A non-zero exit is not a failing test. pytest exits 2 when collection
fails or the run is interrupted, 3 on an internal error, 4 on a usage error
(a node id that does not exist), 5 when no test was collected, and 1 from
``python -m pytest`` when pytest is not even installed. Each of these means
the named tests never ran, so the bug was *not* reproduced, and a candidate
fix after which they cannot run has *not* passed. :func:`classify_run`
tells these apart from a real failure (and a real pass) for pytest and
unittest; any other command is judged by its exit status alone. A run whose
every failure comes from the machine, not the code (a missing module, user
or home, no network, a permission refused outside the copy: see
:func:`fixbugs.pyenv.failures.environment_signature`), "could not run" too:
such a failure is never a reproduction.

Validation uses the same function: ``classify_run(...).status == "passed"``
is the only way a candidate's run counts as green.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fixbugs.pyenv.failures import environment_signature
from fixbugs.pyenv.testoutput import (
    Runner,
    collection_error_in,
    failures,
    import_error_in,
    not_found,
    pytest_counts,
    runner_missing,
    unittest_failed,
    unittest_import_error,
    unittest_ran,
)

__all__ = ["RunVerdict", "classify_run", "tail"]

Status = Literal["failed", "passed", "could_not_run"]

_PYTEST_EXIT = {
    2: "the run was interrupted (collection errors)",
    3: "pytest hit an internal error",
    4: "pytest usage error (a named test or file does not exist, or a bad option)",
    5: "no tests were collected",
}


@dataclass(frozen=True, slots=True)
class RunVerdict:
    """How a test run ended: tests failed, tests passed, or the tests never ran."""

    status: Status
    reason: str  # one line: why it "could not run", or what failed/passed
    failed: int = 0  # failing or erroring tests counted in the summary
    passed: int = 0

    @property
    def ran(self) -> bool:
        return self.status != "could_not_run"

    @property
    def reproduced(self) -> bool:
        """The tests ran and at least one failed or errored: the bug shows."""
        return self.status == "failed"


def tail(text: str, lines: int = 15) -> str:
    """The last ``lines`` lines of ``text``: what a person reads first."""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _pytest(returncode: int, output: str) -> RunVerdict:
    counts = pytest_counts(output)
    if runner_missing(output) and returncode != 0 and counts is None:
        return RunVerdict("could_not_run", "pytest is not installed in this environment")
    if (module := import_error_in(output)) is not None:
        return RunVerdict("could_not_run", f"the test module {module} fails to import")
    if module := collection_error_in(output):
        return RunVerdict("could_not_run", f"collection error in {module}")
    if returncode in _PYTEST_EXIT:
        reason = _PYTEST_EXIT[returncode]
        if missing := not_found(output):
            reason += f": not found: {missing}"
        return RunVerdict("could_not_run", f"{reason} (exit {returncode})")
    if returncode == 0:
        if counts is not None and counts.passed == 0:
            return RunVerdict("could_not_run", "no test passed or failed (exit 0)")
        return RunVerdict("passed", "the tests pass", 0, counts.passed if counts else 0)
    if counts is None or counts.failed == 0:
        return RunVerdict(
            "could_not_run", f"the command failed before any test ran (exit {returncode})"
        )
    return RunVerdict(
        "failed", f"{counts.failed} test(s) failed or errored", counts.failed, counts.passed
    )


def _unittest(returncode: int, output: str) -> RunVerdict:
    n = unittest_ran(output)
    if runner_missing(output) and n is None:
        return RunVerdict("could_not_run", f"the command failed to start (exit {returncode})")
    if (module := unittest_import_error(output)) is not None:
        what = module or "a test module"
        return RunVerdict("could_not_run", f"the test module {what} fails to import")
    if n is None:
        return RunVerdict("could_not_run", f"no test ran (exit {returncode})")
    if n == 0:
        return RunVerdict("could_not_run", "no tests were collected")
    failed = unittest_failed(output)
    if returncode == 0 and failed is None:
        return RunVerdict("passed", "the tests pass", 0, n)
    if not failed:
        return RunVerdict(
            "could_not_run", f"the run failed without a failing test (exit {returncode})"
        )
    return RunVerdict("failed", f"{failed} test(s) failed or errored", failed, n - failed)


def classify_run(
    runner: Runner, returncode: int | None, output: str, *, timed_out: bool = False
) -> RunVerdict:
    """The verdict on one run of a test command (see the module docstring)."""
    if timed_out or returncode is None:
        return RunVerdict("could_not_run", "the run timed out")
    if returncode in (126, 127):
        return RunVerdict(
            "could_not_run", f"command not found or not executable (exit {returncode})"
        )
    if runner == "pytest":
        verdict = _pytest(returncode, output)
    elif runner == "unittest":
        verdict = _unittest(returncode, output)
    elif returncode == 0:
        verdict = RunVerdict("passed", "the command exits 0")
    else:
        verdict = RunVerdict("failed", f"the command fails (exit {returncode})")
    if verdict.status == "failed":
        return _environment(runner, output) or verdict
    return verdict


def _environment(runner: Runner, output: str) -> RunVerdict | None:
    """The "could not run" verdict when every failure in ``output`` comes from the machine."""
    said = [environment_signature(f.text) for f in failures(runner, output)]
    if not said or None in said:
        return None
    return RunVerdict(
        "could_not_run", f"the failure comes from the test environment, not the code: {said[0]}"
    )
