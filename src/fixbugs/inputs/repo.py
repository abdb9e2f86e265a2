"""The repository under investigation, read-only.

A repository is given as its work tree, or as a git repository on disk
without one (a bare repository or a ``.git`` directory), whose HEAD is then
exported with ``git archive`` into a temporary directory. :meth:`files`
lists what is worth reading: text source files, without version control,
virtualenvs, dependency trees, caches, binaries or very large files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from fixbugs.errors import InputError
from fixbugs.inputs.textfile import looks_binary

__all__ = ["Repository", "open_repo"]

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".tox", ".nox", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".eggs", ".idea", ".vscode"}
)  # fmt: skip
BINARY_SUFFIXES = frozenset(
    {".pyc", ".pyo", ".so", ".dll", ".dylib", ".o", ".a", ".exe", ".bin", ".class", ".jar",
     ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".pdf", ".zip", ".gz", ".tgz", ".bz2",
     ".xz", ".whl", ".egg", ".db", ".sqlite", ".woff", ".woff2", ".ttf", ".mp3", ".mp4"}
)  # fmt: skip
MAX_FILE_BYTES = 1_000_000


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
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            here = Path(dirpath)
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d not in SKIP_DIRS
                and not d.endswith(".egg-info")
                and not (here / d / "pyvenv.cfg").exists()
                and not (here / d).is_symlink()
            )
            for name in sorted(filenames):
                path = here / name
                if path.suffix.lower() in BINARY_SUFFIXES or path.is_symlink():
                    continue
                try:
                    if path.stat().st_size > self.max_file_bytes:
                        continue
                    with path.open("rb") as f:
                        if looks_binary(f.read(8192)):
                            continue
                except OSError:
                    continue
                found.append(path.relative_to(self.root).as_posix())
        return tuple(sorted(found))

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
