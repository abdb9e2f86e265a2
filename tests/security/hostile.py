"""Hostile repositories, built by each test, and the mechanisms they need.

Every attack of issue 14 runs for real, as root (CI and the dev container
run as root). A test skips only when the mechanism it exercises is missing
on this machine, and its reason names that mechanism.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

from fixbugs.sandbox import Sandbox, interpreter_paths, probe

PY = sys.executable

NEEDS_NAMESPACES = pytest.mark.skipif(
    not (probe().namespaces and probe().separate_uid),
    reason="needs root with bubblewrap and setpriv (mount/pid/net namespaces, own uid)",
)
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


def pytest_argv_for(*args: str) -> list[str]:
    return [PY, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *args]
