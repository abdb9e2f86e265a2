"""Repositories: source files listed, noise skipped, git dirs exported, empty refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fixbugs.errors import InputError
from fixbugs.inputs import open_repo


def _tree(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "core.py").write_text("def f():\n    return 1\n")
    (root / "README.md").write_text("# demo\n")
    (root / "pkg" / "__pycache__").mkdir()
    (root / "pkg" / "__pycache__" / "core.cpython-311.pyc").write_bytes(b"\x00\x01")
    (root / "node_modules" / "x").mkdir(parents=True)
    (root / "node_modules" / "x" / "index.js").write_text("module.exports = 1\n")
    (root / "venv" / "lib").mkdir(parents=True)
    (root / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / "venv" / "lib" / "site.py").write_text("x = 1\n")
    (root / "logo.dat").write_bytes(b"\x00" * 100)
    (root / "huge.txt").write_text("a" * 2_000_000)
    return root


def test_lists_text_sources_only(tmp_path: Path) -> None:
    repo = open_repo(_tree(tmp_path / "proj"))
    assert repo.files() == ("README.md", "pkg/core.py")
    assert repo.read("pkg/core.py").startswith("def f()")
    assert not repo.is_git


def test_read_refuses_paths_outside(tmp_path: Path) -> None:
    repo = open_repo(_tree(tmp_path / "proj"))
    (tmp_path / "secret.txt").write_text("s")
    with pytest.raises(InputError, match="outside the repository"):
        repo.read("../secret.txt")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_work_tree_with_git_and_bare_repository(tmp_path: Path) -> None:
    work = _tree(tmp_path / "proj")
    _git("init", "-q", cwd=work)
    _git("add", "pkg/core.py", "README.md", cwd=work)
    _git("commit", "-q", "-m", "init", cwd=work)
    assert open_repo(work).is_git
    _git("clone", "-q", "--bare", str(work), str(tmp_path / "bare.git"), cwd=tmp_path)
    for given in (tmp_path / "bare.git", work / ".git"):
        exported = open_repo(given)
        try:
            assert exported.is_git and exported.files() == ("README.md", "pkg/core.py")
        finally:
            exported.close()
        assert exported.temp_dir is not None and not exported.temp_dir.exists()


def test_empty_repository_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="has no text source files"):
        open_repo(empty)
    only_noise = tmp_path / "noise"
    (only_noise / ".git").mkdir(parents=True)
    (only_noise / "blob.bin").write_bytes(b"\x00\xff" * 10)
    with pytest.raises(InputError, match="has no text source files"):
        open_repo(only_noise)


def test_bare_repository_without_commits(tmp_path: Path) -> None:
    _git("init", "-q", "--bare", str(tmp_path / "b.git"), cwd=tmp_path)
    with pytest.raises(InputError, match="has no commit to read"):
        open_repo(tmp_path / "b.git")


def test_missing_or_file_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        open_repo(tmp_path / "nope")
    f = tmp_path / "file.py"
    f.write_text("x")
    with pytest.raises(InputError, match="not a directory"):
        open_repo(f)
