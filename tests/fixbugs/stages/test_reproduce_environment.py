"""A given test command whose failures come from the machine does not reproduce the bug.

The reproduction runs the user's ``--test`` in a real sandbox; each test of
the synthetic repository fails for want of something the machine lacks (a
module, a user's home, a network) and none for the code's own reason, so the
reproduction says "could not run" with the signature, never "confirmed".
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from userpython import user_python

from fixbugs.run.agent import run_from_paths

pytestmark = pytest.mark.needs_namespaces

TESTS = textwrap.dedent(
    """
    import os, pwd, socket
    from pathlib import Path


    def test_needs_a_module():
        import fixbugs_not_installed_anywhere  # noqa: F401


    def test_needs_a_network():
        socket.create_connection(("192.0.2.1", 80), timeout=10)


    def test_needs_a_user(monkeypatch):
        def unknown(uid):
            raise KeyError(f"getpwuid(): uid not found: {uid}")

        monkeypatch.delenv("HOME")
        monkeypatch.setattr(pwd, "getpwuid", unknown)
        Path.home()
    """
)


async def write_repo(tmp_path: Path, tests: str) -> Path:
    repo = tmp_path / "proj"
    (repo / "tests").mkdir(parents=True)
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "tests" / "test_env.py").write_text(tests)
    (repo / "report.md").write_text("# tests fail\n\nThe tests in tests/test_env.py fail.\n")
    return repo


async def test_a_test_failing_for_the_machine_could_not_run(tmp_path: Path) -> None:
    repo = await write_repo(tmp_path, TESTS)
    report = await run_from_paths(
        report=repo / "report.md",
        repo=repo,
        test="python -m pytest -p no:cacheprovider tests/test_env.py",
        use_model=False,
        python=user_python(),
    )
    rep = report.to_dict()["reproduction"]
    assert rep["status"] == "could_not_run" and not rep["confirmed"], rep
    assert "the failure comes from the test environment, not the code" in rep["summary"]
    assert "No module named 'fixbugs_not_installed_anywhere'" in rep["summary"]


async def test_the_same_tests_with_a_failure_of_the_code_reproduce(tmp_path: Path) -> None:
    real = TESTS + "\n\ndef test_add():\n    from calc import add\n    assert add(2, 2) == 5\n"
    repo = await write_repo(tmp_path, real)
    report = await run_from_paths(
        report=repo / "report.md",
        repo=repo,
        test="python -m pytest -p no:cacheprovider tests/test_env.py",
        use_model=False,
        python=user_python(),
        repair_candidates=1,  # the reproduction is what is checked, not the repair search
    )
    assert report.to_dict()["reproduction"]["status"] == "confirmed"
