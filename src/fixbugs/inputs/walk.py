"""The one walk over a repository's files: what FixBugs reads as the project's source.

The agent (:class:`~fixbugs.inputs.repo.Repository`) and ``fixbugs eval``'s
baselines (:func:`fixbugs.eval.run.read_tree`) list files through
:func:`walk_text_files`, so they rank the same files. Left out: version
control, caches, dependency trees, virtualenvs (by name or by their
``pyvenv.cfg``), packaging metadata, build output at the root, symbolic
links, binaries by suffix or content, and very large files. Only regular
files are opened, by ``lstat`` and then without following a link or
blocking: a FIFO blocks an ordinary ``open`` until a writer comes, and a
device reads without end. A file or folder whose name is not valid UTF-8
is left out too (its name, decoded with surrogates, would break every
report, cache row and JSON line that names it). The walk lists the special
files and the misnamed paths it left out when asked (``special``,
``misnamed``), so a run can say so.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from fixbugs.inputs.textfile import looks_binary

__all__ = ["BINARY_SUFFIXES", "MAX_FILE_BYTES", "SKIP_DIRS", "skip_dir", "walk_text_files"]

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".tox", ".nox", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".eggs", ".idea", ".vscode", ".venv", "venv"}
)  # fmt: skip
# build output, skipped only at the repository root (a package may be named "build")
ROOT_SKIP_DIRS = frozenset({"build", "dist"})
BINARY_SUFFIXES = frozenset(
    {".pyc", ".pyo", ".so", ".dll", ".dylib", ".o", ".a", ".exe", ".bin", ".class", ".jar",
     ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".pdf", ".zip", ".gz", ".tgz", ".bz2",
     ".xz", ".whl", ".egg", ".db", ".sqlite", ".woff", ".woff2", ".ttf", ".mp3", ".mp4"}
)  # fmt: skip
MAX_FILE_BYTES = 1_000_000
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)


def skip_dir(parent: Path, name: str, *, at_root: bool) -> bool:
    """True for a folder that is not the project's source."""
    return (
        name in SKIP_DIRS
        or name.endswith(".egg-info")
        or (at_root and name in ROOT_SKIP_DIRS)
        or (parent / name).is_symlink()
        or (parent / name / "pyvenv.cfg").exists()
    )


def _utf8(name: str) -> bool:
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def walk_text_files(
    root: Path,
    *,
    max_file_bytes: int = MAX_FILE_BYTES,
    special: list[str] | None = None,
    misnamed: list[str] | None = None,
) -> Iterator[str]:
    """Text files under ``root`` as POSIX paths relative to it, in sorted order.

    FIFOs, sockets and devices are never opened; their paths go to ``special``.
    Files and folders whose names are not valid UTF-8 are never entered; their
    paths (their bad bytes as ``\\xff`` escapes) go to ``misnamed``.
    """
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        bad = [n for n in (*dirnames, *filenames) if not _utf8(n)]
        if bad and misnamed is not None:
            rel = here.relative_to(root)
            misnamed.extend(
                os.fsencode((rel / n).as_posix()).decode("utf-8", "backslashreplace") for n in bad
            )
        dirnames[:] = sorted(
            d for d in dirnames if _utf8(d) and not skip_dir(here, d, at_root=here == root)
        )
        for name in sorted(filenames):
            if not _utf8(name):
                continue
            path = here / name
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                if special is not None and not stat.S_ISLNK(st.st_mode):
                    special.append(path.relative_to(root).as_posix())
                continue
            if path.suffix.lower() in BINARY_SUFFIXES or st.st_size > max_file_bytes:
                continue
            if _is_text(path):
                yield path.relative_to(root).as_posix()


def _is_text(path: Path) -> bool:
    """A regular file (still, at open) whose first block is text."""
    try:
        fd = os.open(path, _OPEN)
    except OSError:
        return False
    try:
        return stat.S_ISREG(os.fstat(fd).st_mode) and not looks_binary(os.read(fd, 8192))
    except OSError:
        return False
    finally:
        os.close(fd)
