"""Hostile repositories, built by each test, and the mechanisms they need.

Every attack of issue 14 runs for real, as root (CI and the dev container
run as root). A test skips only when the mechanism it exercises is missing
on this machine, and its reason names that mechanism.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from agentrt import SystemClock
from fixbugs.inputs.repo import Repository
from fixbugs.run.context import AgentOptions, RunContext
from fixbugs.run.progress import EventSink, Journal
from fixbugs.sandbox import Sandbox, interpreter_paths, probe

PY = sys.executable

NEEDS_NAMESPACES = pytest.mark.needs_namespaces  # the root conftest skips, naming why
NEEDS_CGROUPS = pytest.mark.skipif(
    probe().cgroups is None,
    reason="needs the memory and pids cgroup controllers (v1) or a delegated cgroup v2",
)
NEEDS_TMPFS = pytest.mark.skipif(
    not probe().copy_tmpfs, reason="needs root to mount the copy's size-limited tmpfs"
)


def host_has(path: Path) -> bool:
    """Whether ``path`` exists on the host (outside every sandbox)."""
    return path.exists()


def write_repo(root: Path, files: Mapping[str, str]) -> Path:
    """A repository of ``files`` (path -> source, dedented)."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def hostile(tmp_path: Path, test_source: str, **more: str) -> Path:
    """A repository whose test file is ``test_source`` (plus ``more`` files)."""
    files = {"pkg/__init__.py": "", "pkg/calc.py": "def add(a, b):\n    return a + b\n"}
    files["test_attack.py"] = test_source
    files.update({k.replace("__", "/"): v for k, v in more.items()})
    return write_repo(tmp_path / "hostile", files)


def open_sandbox(repo: Path, tmp_path: Path, **kw: object) -> Sandbox:
    return Sandbox.create(
        repo,
        base_dir=tmp_path,
        readonly_paths=interpreter_paths(Path(PY)),
        **kw,  # type: ignore[arg-type]
    )


def plain_context(repo: Repository, sink: EventSink = lambda _: None) -> RunContext:
    """A run's services with no model, on the system clock, for running commands."""
    return RunContext.create(
        repo,
        models=None,
        options=AgentOptions(use_model=False),
        journal=Journal(SystemClock(), sink),
    )


def pytest_argv_for(*args: str) -> list[str]:
    return [PY, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *args]


# ``python -m coverage run … -m pytest ARGS`` runs pytest for real (so the
# outcomes are real); the package's ``CoverageData``, which FixBugs' reader of
# the contexts imports, reports that the failing test covers each way of naming
# each target from the folder it runs in (computed there: only the sandbox knows
# where the copy is), and each of the repository's own files, relative and absolute.
_COVERAGE_RUN = """
import os, sys

argv = sys.argv[1:]
if argv[0] == "run":
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import pytest

    sys.exit(pytest.main(argv[argv.index("pytest") + 1 :]))
"""
# A ``coverage`` package's stand-in for coverage.py's ``CoverageData``: the module
# defines ``names()`` (the files it claims were measured) and ``CONTEXTS`` (line ->
# contexts) before it.
COVERAGE_DATA_CLASS = """

class CoverageData:
    def __init__(self, basename=None):
        pass

    def read(self):
        pass

    def measured_files(self):
        return set(names())

    def contexts_by_lineno(self, path):
        return {int(k): v for k, v in CONTEXTS.items()}
"""
_COVERAGE_DATA = """
import os

TARGETS, OWN, CONTEXTS = {targets!r}, {own!r}, {contexts!r}


def names():
    copy = os.getcwd()
    out = []
    for t in TARGETS:
        up = os.path.relpath(t, copy)
        out += [t, up, copy + "/../" + up, "/proc/self/root" + t, "/proc/1/root" + t,
                "/proc/1/cwd" + t, "/proc/self/cwd/" + up]
    return out + [n for rel in OWN for n in (rel, copy + "/" + rel)]
"""
SHADOW_FORMS = 7  # names the shadow reports for each target


def coverage_shadow(
    targets: Sequence[str],
    own: Sequence[str],
    contexts: Mapping[str, Sequence[str]],
) -> dict[str, str]:
    """The files of a ``coverage`` package, at a repository's root, that shadows coverage.py.

    Its report names each host path of ``targets`` in :data:`SHADOW_FORMS`
    ways and each repository file of ``own``; every name gets the line
    ``contexts`` (line number -> coverage contexts, ``module.test``).
    """
    source = (
        _COVERAGE_DATA.format(
            targets=list(targets), own=list(own), contexts={k: list(v) for k, v in contexts.items()}
        )
        + COVERAGE_DATA_CLASS
    )
    return {"coverage/__init__.py": source, "coverage/__main__.py": _COVERAGE_RUN}
