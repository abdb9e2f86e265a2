"""The repository under investigation, read-only.

A repository is given as its work tree, or as a git repository on disk
without one (a bare repository or a ``.git`` directory), whose HEAD is then
exported into a temporary directory by :func:`fixbugs.inputs.hostgit.export_head`,
which runs nothing the repository configures. :meth:`files` lists what is
worth reading: text source files, without version control, virtualenvs,
dependency trees, caches, binaries or very large files; FIFOs, sockets and
devices are never opened, and :meth:`notes` names them, as it names the
paths left out because their names are not valid UTF-8.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

from fixbugs.errors import InputError
from fixbugs.inputs.hostgit import export_head, is_git_dir
from fixbugs.inputs.walk import BINARY_SUFFIXES, MAX_FILE_BYTES, SKIP_DIRS, walk_text_files
from fixbugs.sandbox.untrusted import UntrustedFile, read_untrusted_sync

__all__ = ["BINARY_SUFFIXES", "MAX_FILE_BYTES", "SKIP_DIRS", "Repository", "open_repo"]

_MAX_READ_BYTES = 64 << 20  # one file the agent reads (listed files are far smaller)


@dataclass(frozen=True)
class Repository:
    """A read-only view of a source tree; ``temp_dir`` is set when we exported it."""

    root: Path
    is_git: bool
    max_file_bytes: int = MAX_FILE_BYTES
    temp_dir: Path | None = field(default=None, compare=False)

    def files(self) -> tuple[str, ...]:
        """Text source files, as sorted POSIX paths relative to ``root``."""
        return self._walk[0]

    def special_files(self) -> tuple[str, ...]:
        """FIFOs, sockets and devices the walk found and never opened (sorted paths)."""
        return self._walk[1]

    def notes(self) -> tuple[str, ...]:
        """What the run should say about the tree: the special files and misnamed paths it
        left out."""
        out = []
        special = self.special_files()
        if special:
            out.append(
                f"left out {len(special)} special file(s) of the repository "
                f"(FIFO, socket or device; never opened): {_names(special)}"
            )
        misnamed = self._walk[2]
        if misnamed:
            out.append(
                f"left out {len(misnamed)} path(s) of the repository whose names are not "
                f"valid UTF-8: {_names(misnamed)}"
            )
        return tuple(out)

    @cached_property
    def _walk(self) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
        special: list[str] = []
        misnamed: list[str] = []
        files = walk_text_files(
            self.root, max_file_bytes=self.max_file_bytes, special=special, misnamed=misnamed
        )
        return tuple(sorted(files)), tuple(sorted(special)), tuple(sorted(misnamed))

    @cached_property
    def _resolved_root(self) -> Path:
        return self.root.resolve()  # the root stays where it is: resolved once, not per read

    @cached_property
    def _resolved_folders(self) -> dict[PurePosixPath, Path]:
        return {}

    def _resolve(self, rel: str | Path) -> Path:
        """``root/rel`` with every link resolved, as ``Path.resolve`` gives it; a folder's
        resolution is kept, since the files of a tree share few folders."""
        p = PurePosixPath(rel)
        if p.is_absolute() or not p.parts or any(part in (".", "..") for part in p.parts):
            return (self.root / rel).resolve()
        folder = self._resolved_folders.get(p.parent)
        if folder is None:
            folder = self._resolved_folders[p.parent] = (self.root / p.parent).resolve()
        path = folder / p.name
        # a name that is a link resolves further (a folder's resolution holds for the rest)
        return (self.root / rel).resolve() if path.is_symlink() else path

    def read(self, rel: str | Path) -> str:
        """The text of one regular file; a path leaving the repository is refused."""
        path = self._resolve(rel)
        root = self._resolved_root
        if path != root and root not in path.parents:
            raise InputError(f"{rel} is outside the repository {self.root}")
        try:
            data = read_untrusted_sync(path, max_bytes=_MAX_READ_BYTES, within=root)
        except UntrustedFile as e:  # a FIFO would block an ordinary open
            raise InputError(f"cannot read {rel} in {self.root}: {e}") from e
        return data.decode("utf-8", errors="replace")

    def close(self) -> None:
        """Delete the exported copy, if we made one."""
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)


def _names(paths: tuple[str, ...]) -> str:
    return ", ".join(repr(s) for s in paths[:5]) + (", ..." if len(paths) > 5 else "")


def open_repo(path: Path) -> Repository:
    """Open a work tree, or export HEAD of a bare repository / ``.git`` directory."""
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(f"repository {p} does not exist; give the path of the project")
    if not p.is_dir():
        raise InputError(f"repository {p} is not a directory; give the project's root folder")
    if is_git_dir(p) and not (p / ".git").exists():
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
    tmp = Path(tempfile.mkdtemp(prefix="fixbugs-repo-"))
    try:
        export_head(git_dir, tmp / "tree")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Repository(root=(tmp / "tree").resolve(), is_git=True, temp_dir=tmp)
