"""The copied tree of a sandbox: what is copied, its size, its owner, its processes.

Plain helpers of :class:`fixbugs.sandbox.Sandbox` on directories and
``/proc``, kept apart so the sandbox's module holds its lifecycle only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
from pathlib import Path

__all__ = ["chown_tree", "ignore_noise", "kill_uid", "tree_bytes"]

# Never copied: version control, caches and virtualenvs are not the source.
_SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        "node_modules",
    }
)


def ignore_noise(directory: str, names: list[str]) -> set[str]:
    """What a copy leaves out: the noise above, and what is no file, folder or link.

    A FIFO would fail the copy (or block it, opened), a device would be read
    without end; the repository's walk names them in the run's notes.
    """
    return {
        n
        for n in names
        if n in _SKIP_DIRS or n.endswith(".pyc") or _special(os.path.join(directory, n))
    }


def _special(path: str) -> bool:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return True
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


def tree_bytes(root: Path) -> int:
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
        for name in filenames:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(dirpath, name)).st_size + 4096
    return total


def chown_tree(root: Path, uid: int) -> None:
    os.lchown(root, uid, uid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            os.lchown(os.path.join(dirpath, name), uid, uid)


def kill_uid(uid: int) -> None:
    """SIGKILL every process running as ``uid`` (a sandbox uid owns nothing else)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("Uid:"):
                if int(line.split()[1]) == uid:
                    with contextlib.suppress(OSError):
                        os.kill(int(entry.name), signal.SIGKILL)
                break
