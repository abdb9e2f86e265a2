"""The reproduction's compiled modules, kept so that every later fork imports them compiled.

Each fork is a fresh copy of the pristine tree, and copies never carry
``__pycache__`` (:func:`fixbugs.sandbox.trees.ignore_noise`): so every
candidate's test run compiled the whole project again before its test
started. On sympy that was 3-4 s of an 8 s candidate run (py-spy, 2026-12-07).

:func:`keep` reads back, from the copy the reproduction ran in, the
bytecode its interpreter wrote for the pristine sources, and
:func:`restore` puts it into each new fork. Only a file that is exactly
what an import of the pristine source would write is kept:

- named ``<module>.cpython-<NN>.pyc`` in the ``__pycache__`` folder beside a
  regular ``<module>.py`` of the pristine tree (no optimisation level, no
  pytest rewrite: those record the path they were written at, and a fork's
  path differs);
- a timestamp pyc (PEP 552 flags 0) whose header holds that source's mtime
  and size, so Python itself would take it for that source, and drops it as
  soon as a candidate's patch changes the file;
- read as :mod:`fixbugs.sandbox.untrusted` reads a copy a test has run in:
  by descriptor, following no link, regular files only, within caps.

FixBugs never loads these bytes; only the sandboxed interpreter does, in a
fork, where the repository's code runs anyway: a test that planted a
crafted pyc there could as well have changed the source it ran.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fixbugs.sandbox.untrusted import UntrustedFile, open_folder, read_untrusted_sync

__all__ = ["Kept", "forget", "keep", "keep_for_forks", "kept_bytes", "restore"]

_PLAIN = re.compile(r"^(?P<stem>[A-Za-z_]\w*)\.cpython-\d{2,3}\.pyc$")
_MAX_FILE = 16 * 1024 * 1024
_MAX_TOTAL = 512 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Kept:
    """What :func:`keep` copied: files and bytes, and why it stopped early, if it did."""

    files: int
    bytes: int
    stopped: str | None = None

    def line(self) -> str:
        size = f"{self.bytes / 1e6:.1f} MB"
        done = f"kept {self.files} compiled module(s) ({size}) of the reproduction's run"
        return done + (f"; stopped: {self.stopped}" if self.stopped else "") + " for the forks"


def keep(root: Path, baseline: Path, dest: Path) -> Kept:
    """Copy the bytecode under ``root`` that matches ``baseline``'s sources into ``dest``.

    ``baseline`` and ``dest`` are FixBugs' own folders; ``root`` is the copy
    a test has run in, read only through descriptors. The walk follows the
    pristine tree, so nothing a test created elsewhere is even listed.
    """
    files = total = 0
    for folder, sources in _source_folders(baseline):
        cache = PurePosixPath(folder, "__pycache__")
        try:
            fd = open_folder(root, cache)
        except OSError:
            continue
        try:
            for name in sorted(os.listdir(fd)):
                m = _PLAIN.match(name)
                src = sources.get(m["stem"]) if m else None
                if src is None:
                    continue
                data = _read_matching(root, cache / name, src)
                if data is None:
                    continue
                if total + len(data) > _MAX_TOTAL:
                    return Kept(files, total, f"over {_MAX_TOTAL // 2**20} MB")
                out = dest / cache
                out.mkdir(parents=True, exist_ok=True)
                (out / name).write_bytes(data)
                files += 1
                total += len(data)
        finally:
            os.close(fd)
    return Kept(files, total)


def keep_for_forks(owns_baseline: bool, root: Path, baseline: Path, dest: Path) -> str:
    """:func:`keep` for a workspace's ``keep_bytecode``: the line it reports. A fork keeps
    nothing, since only the forks of the workspace that owns the baseline read ``dest``."""
    if not owns_baseline:
        return "a fork keeps no bytecode: its parent's forks would not see it"
    return keep(root, baseline, dest).line()


def restore(kept: Path, root: Path) -> None:
    """Put the kept bytecode into a fresh copy (before any command runs in it)."""
    if kept.is_dir():
        shutil.copytree(kept, root, dirs_exist_ok=True)


def forget(root: Path, paths: Iterable[str]) -> None:
    """Delete the bytecode of the ``paths`` a patch just changed in the copy ``root``.

    Python takes a pyc whose header holds its source's mtime and size: a
    same-size edit within the second the source was written (a tree made
    just before the run) would import the old code. So a changed source
    never keeps one. Names are unlinked through the cache folder's
    descriptor, which is opened following no link.
    """
    for path in paths:
        rel = PurePosixPath(path)
        if rel.suffix != ".py":
            continue
        try:
            fd = open_folder(root, rel.parent / "__pycache__")
        except OSError:
            continue
        try:
            for name in os.listdir(fd):
                if name.startswith(rel.stem + ".") and name.endswith(".pyc"):
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=fd)
        finally:
            os.close(fd)


def kept_bytes(kept: Path) -> int:
    """What :func:`restore` adds to a copy, for the size of its filesystem."""
    return sum(os.lstat(os.path.join(d, f)).st_size for d, _, names in os.walk(kept) for f in names)


def _source_folders(baseline: Path) -> list[tuple[PurePosixPath, dict[str, os.stat_result]]]:
    """Each folder of the pristine tree (relative) with its regular ``.py`` files' stats."""
    out = []
    for dirpath, dirnames, filenames in os.walk(baseline):
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and not d.startswith(".")]
        sources = {}
        for f in filenames:
            if not f.endswith(".py"):
                continue
            st = os.lstat(os.path.join(dirpath, f))
            if stat.S_ISREG(st.st_mode):
                sources[f[:-3]] = st
        if sources:
            rel = os.path.relpath(dirpath, baseline)
            out.append((PurePosixPath(rel), sources))
    return out


def _read_matching(root: Path, pyc: PurePosixPath, src: os.stat_result) -> bytes | None:
    """The pyc at ``root/pyc`` if it is a regular file, no link on the way, whose header
    is ``src``'s (:func:`fixbugs.sandbox.untrusted.read_untrusted_sync` reads it)."""
    try:
        data = read_untrusted_sync(root / pyc, max_bytes=_MAX_FILE, within=root)
    except (UntrustedFile, OSError):
        return None
    if len(data) < 16 or int.from_bytes(data[4:8], "little") != 0:  # PEP 552: by timestamp
        return None
    mtime = int.from_bytes(data[8:12], "little")
    size = int.from_bytes(data[12:16], "little")
    if mtime != int(src.st_mtime) & 0xFFFFFFFF or size != src.st_size & 0xFFFFFFFF:
        return None
    return data
