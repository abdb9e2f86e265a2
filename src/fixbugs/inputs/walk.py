"""The one walk over a repository's files: what FixBugs reads as the project's source.

The agent (:class:`~fixbugs.inputs.repo.Repository`), ``fixbugs eval``'s
baselines and its localize-only runner all list files through
:func:`walk_text_files`, so they rank the same files. Left out: version
control, caches, dependency trees, virtualenvs (by name or by their
``pyvenv.cfg``), packaging metadata, build output at the root, symbolic
links, binaries by suffix or content, and very large files.
"""

from __future__ import annotations

import os
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


def skip_dir(parent: Path, name: str, *, at_root: bool) -> bool:
    """True for a folder that is not the project's source."""
    return (
        name in SKIP_DIRS
        or name.endswith(".egg-info")
        or (at_root and name in ROOT_SKIP_DIRS)
        or (parent / name).is_symlink()
        or (parent / name / "pyvenv.cfg").exists()
    )


def walk_text_files(root: Path, *, max_file_bytes: int = MAX_FILE_BYTES) -> Iterator[str]:
    """Text files under ``root`` as POSIX paths relative to it, in sorted order."""
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not skip_dir(here, d, at_root=here == root))
        for name in sorted(filenames):
            path = here / name
            if path.suffix.lower() in BINARY_SUFFIXES or path.is_symlink():
                continue
            try:
                if path.stat().st_size > max_file_bytes:
                    continue
                with path.open("rb") as f:
                    if looks_binary(f.read(8192)):
                        continue
            except OSError:
                continue
            yield path.relative_to(root).as_posix()
