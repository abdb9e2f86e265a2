"""The repository's root conftest: its markers skip only what is missing, and
loading it imports no fixbugs (agentrt's tests run under it).

Each case runs a small test file under a copy of the root conftest (pytester);
the machine's mechanisms are stood in for, so the outcome is the same as root
or not, with or without namespaces.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

ROOT_CONFTEST = Path(__file__).resolve().parents[2] / "conftest.py"
QUEUES = Path(__file__).resolve().parent / "queues"  # redisproc, which the conftest imports
KIT = ROOT_CONFTEST.parent / "tests" / "kit"  # userpython, which it imports too

NO_ROOT = "Skipped: needs root (the sandbox's containment runs commands as another user)"
NO_NS = "Skipped: needs root with bubblewrap and setpriv (mount/pid/net namespaces, own uid)"
MARKED = """
import pytest

@pytest.mark.{marker}
def test_marked():
    pass

def test_unmarked():
    pass
"""


@pytest.fixture
def house(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(
        f"[pytest]\npythonpath = {QUEUES} {KIT}\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makeconftest(ROOT_CONFTEST.read_text(encoding="utf-8"))
    return pytester


def skipped(run: pytest.HookRecorder) -> dict[str, str]:
    """Each skipped test's name and its reason."""
    _, skips, _ = run.listoutcomes()
    return {r.nodeid.split("::")[-1]: str(r.longrepr[2]) for r in skips}  # type: ignore[index]


def fake_probe(monkeypatch: pytest.MonkeyPatch, *, namespaces: bool) -> None:
    """Stand in for ``fixbugs.sandbox`` (never imported here) with a probe's answer."""
    found = types.SimpleNamespace(namespaces=namespaces, separate_uid=namespaces)
    fake = types.ModuleType("fixbugs.sandbox")
    fake.probe = lambda: found  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fixbugs.sandbox", fake)


@pytest.mark.parametrize(("euid", "expected"), [(1000, {"test_marked": NO_ROOT}), (0, {})])
def test_needs_root_skips_only_when_not_root_and_says_so(house, monkeypatch, euid, expected):
    house.makepyfile(MARKED.format(marker="needs_root"))
    monkeypatch.setattr(os, "geteuid", lambda: euid)
    run = house.inline_run("--strict-markers")
    run.assertoutcome(passed=2 - len(expected), skipped=len(expected))
    assert skipped(run) == expected


@pytest.mark.parametrize(("namespaces", "expected"), [(False, {"test_marked": NO_NS}), (True, {})])
def test_needs_namespaces_follows_the_sandbox_probe(house, monkeypatch, namespaces, expected):
    house.makepyfile(MARKED.format(marker="needs_namespaces"))
    fake_probe(monkeypatch, namespaces=namespaces)
    run = house.inline_run("--strict-markers")
    run.assertoutcome(passed=2 - len(expected), skipped=len(expected))
    assert skipped(run) == expected


def test_the_root_conftest_imports_no_fixbugs(house):
    house.makepyfile(
        """
        import sys

        def test_fixbugs_is_not_loaded():
            assert not [m for m in sys.modules if m.split(".")[0] == "fixbugs"]
        """
    )
    # a fresh interpreter: this one may have imported fixbugs for other tests
    house.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
