"""The repository under investigation, read-only.

A repository is given as its work tree, or as a git repository on disk
without one (a bare repository or a ``.git`` directory), whose HEAD is then
exported with ``git archive`` into a temporary directory. :meth:`files`
lists what is worth reading: text source files, without version control,
virtualenvs, dependency trees, caches, binaries or very large files.
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from fixbugs.errors import InputError
from fixbugs.inputs.walk import BINARY_SUFFIXES, MAX_FILE_BYTES, SKIP_DIRS, walk_text_files

__all__ = ["BINARY_SUFFIXES", "MAX_FILE_BYTES", "SKIP_DIRS", "Repository", "open_repo"]


@dataclass(frozen=True)
class Repository:
    """A read-only view of a source tree; ``temp_dir`` is set when we exported it."""

    root: Path
    is_git: bool
    max_file_bytes: int = MAX_FILE_BYTES
    temp_dir: Path | None = field(default=None, compare=False)

    def files(self) -> tuple[str, ...]:
        """Text source files, as sorted POSIX paths relative to ``root``."""
        return self._files

    @cached_property
    def _files(self) -> tuple[str, ...]:
        return tuple(sorted(walk_text_files(self.root, max_file_bytes=self.max_file_bytes)))

    def read(self, rel: str | Path) -> str:
        """The text of one file; a path leaving the repository is refused."""
        path = (self.root / rel).resolve()
        root = self.root.resolve()
        if path != root and root not in path.parents:
            raise InputError(f"{rel} is outside the repository {self.root}")
        try:
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            raise InputError(f"cannot read {rel} in {self.root}: {e.strerror}") from e

    def close(self) -> None:
        """Delete the exported copy, if we made one."""
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)


def _is_git_dir(p: Path) -> bool:
    return (p / "HEAD").is_file() and (p / "objects").is_dir() and (p / "refs").is_dir()


def open_repo(path: Path) -> Repository:
    """Open a work tree, or export HEAD of a bare repository / ``.git`` directory."""
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(f"repository {p} does not exist; give the path of the project")
    if not p.is_dir():
        raise InputError(f"repository {p} is not a directory; give the project's root folder")
    if _is_git_dir(p) and not (p / ".git").exists():
        repo = _export_head(p)
    else:
        repo = Repository(root=p.resolve(), is_git=(p / ".git").exists())
    if not repo.files():
        repo.close()
        raise InputError(
            f"repository {p} has no text source files; give the folder that holds the code"
        )
    return repo


def _export_head(git_dir: Path) -> Repository:
    if shutil.which("git") is None:
        raise InputError(f"{git_dir} is a git repository without a work tree and git is missing")
    tmp = Path(tempfile.mkdtemp(prefix="fixbugs-repo-"))
    archive = tmp / "head.tar"
    done = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", "--format=tar", "-o", str(archive), "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        reason = done.stderr.strip().splitlines()[-1:] or ["git archive failed"]
        raise InputError(
            f"repository {git_dir} has no commit to read ({reason[0]}); "
            "commit the code or give the work tree"
        )
    tree = tmp / "tree"
    with tarfile.open(archive) as tar:
        tar.extractall(tree, filter="data")
    archive.unlink()
    return Repository(root=tree.resolve(), is_git=True, temp_dir=tmp)
