"""Fixtures for sandbox tests: a tiny repository and a process census by uid."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixbugs.sandbox import Sandbox, interpreter_paths


@pytest.fixture
def original(tmp_path: Path) -> Path:
    repo = tmp_path / "orig"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "test_calc.py").write_text(
        "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    )
    (repo / ".git").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return repo


@pytest.fixture
def sandbox(original: Path, tmp_path: Path) -> Iterator[Sandbox]:
    with Sandbox.create(
        original, base_dir=tmp_path, readonly_paths=interpreter_paths(Path(sys.executable))
    ) as sb:
        yield sb
