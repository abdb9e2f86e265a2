"""Applying a unified diff to a tree: the one sequence of tools, fallback and roll-back.

The sandbox (its copy), the test workspace (its copy) and ``--apply`` and the
scorer (:func:`fixbugs.inputs.hostgit.apply_diff`, a tree on the host) all
apply a diff through :func:`apply_patch`; each says only how a tool runs
in its tree (contained, or a plain host tool, and with which git settings).

``git apply`` goes first: it checks every hunk before writing any, and
refuses ``..`` paths and writes through symlinks. ``patch -p1`` is the
fallback; it is not atomic, so it is dry-run first, and when it fails all
the same every path the diff names is put back as it was. Only a path
whose folder, links resolved, is inside the tree is saved or put back, and
it is put back through a descriptor of that folder, by a fresh file renamed
over the name (:class:`~fixbugs.sandbox.untrusted.HostFolder`): whatever the
failed tool, or anything else that ran in the tree, left there is replaced,
never followed or written through.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbugs.diffs import touched_files
from fixbugs.sandbox.hosttools import ToolRun
from fixbugs.sandbox.untrusted import HostFolder, UntrustedFile, open_folder, read_untrusted_sync

__all__ = ["PatchResult", "ToolRunner", "apply_patch"]

_MAX_SAVED_BYTES = 16 << 20
EMPTY = "the patch is empty or has no file headers"

# How a tool runs in the tree: (argv, stdin) -> how it ended.
ToolRunner = Callable[[Sequence[str], bytes], ToolRun]


@dataclass(frozen=True)
class PatchResult:
    """Whether a diff applied, all of it or nothing, with which tool, and what it said."""

    applied: bool
    tool: str
    files: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class _Attempt:
    tool: str
    check: tuple[str, ...] | None  # a dry run first, for a tool that is not atomic
    apply: tuple[str, ...]


_ATTEMPTS = (
    _Attempt("git apply", None, ("git", "apply", "-")),
    _Attempt(
        "patch -p1",
        ("patch", "-p1", "--dry-run", "--batch", "--forward"),
        ("patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "--reject-file=-"),
    ),
)


def apply_patch(diff: str, root: Path, run: ToolRunner, *, owner: int | None = None) -> PatchResult:
    """Apply ``diff`` to the tree at ``root``, each tool through ``run``; all of it or nothing.

    ``owner`` is the uid that a file put back after a failed ``patch`` gets
    (the sandbox's), or None to leave it to whoever writes it.
    """
    files = touched_files(diff)
    if not diff.strip() or not files:
        return PatchResult(False, "none", (), EMPTY)
    data = diff.encode() if diff.endswith("\n") else (diff + "\n").encode()
    root = root.resolve()
    messages: list[str] = []
    for attempt in _ATTEMPTS:
        if shutil.which(attempt.apply[0]) is None:
            messages.append(f"{attempt.tool}: not installed")
            continue
        if attempt.check is not None:
            checked = run(attempt.check, data)
            if not checked.ok:
                messages.append(f"{attempt.tool}: {checked.said()}")
                continue
        saved = _save(root, files)
        with HostFolder.open(root) as tree:  # held before the tool runs in the tree
            done = run(attempt.apply, data)
            if done.ok:
                return PatchResult(True, attempt.tool, files, done.said())
            _restore(tree, saved, owner)
        messages.append(f"{attempt.tool}: {done.said()}")
    return PatchResult(False, "none", files, "\n".join(messages))


@dataclass(frozen=True)
class _Saved:
    """What one path the diff names held before a tool ran: put back if the tool fails."""

    folder: str  # its folder, links resolved, relative to the tree ("" for the top)
    name: str
    content: bytes | str | None  # a file's bytes, a link's target, or None: nothing there
    mode: int = 0o644

    @property
    def rel(self) -> str:
        return f"{self.folder}/{self.name}" if self.folder else self.name


def _folder_inside(root: Path, path: Path) -> str | None:
    """``path``'s folder, symlinks resolved, relative to ``root``, if it is ``root`` or below."""
    parent = os.path.realpath(path.parent)
    if parent == str(root):
        return ""
    if parent.startswith(str(root) + os.sep):
        return parent[len(str(root)) + 1 :]
    return None


def _save(root: Path, files: Sequence[str]) -> list[_Saved]:
    """What each named path inside ``root`` holds; a folder, FIFO or device is left alone."""
    saved: dict[tuple[str, str], _Saved] = {}
    for rel in files:
        # patch -p1 strips the first component, whatever the prefix is
        for candidate in {rel, rel.split("/", 1)[-1]}:
            path = root / candidate
            folder = _folder_inside(root, path)
            if folder is None or (folder, path.name) in saved or path.name in ("", "..", "."):
                continue
            found = _saved(root, folder, path.name)
            if found is not None:
                saved[(folder, path.name)] = found
    return list(saved.values())


def _saved(root: Path, folder: str, name: str) -> _Saved | None:
    try:
        fd = open_folder(root, folder)
    except FileNotFoundError:  # a new folder: what a failed tool puts there is removed
        return _Saved(folder, name, None)
    except OSError:
        return None
    try:
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            return _Saved(folder, name, os.readlink(name, dir_fd=fd))
        if stat.S_ISREG(st.st_mode):
            where = root / folder / name
            data = read_untrusted_sync(where, max_bytes=_MAX_SAVED_BYTES, within=root)
            return _Saved(folder, name, data, stat.S_IMODE(st.st_mode))
        return None
    except FileNotFoundError:
        return _Saved(folder, name, None)
    except (OSError, UntrustedFile):
        return None
    finally:
        os.close(fd)


def _restore(tree: HostFolder, saved: Sequence[_Saved], owner: int | None) -> None:
    """Put each saved path back through ``tree``: the failed tool ran in it, and what it
    left at a name (a link, a FIFO) is replaced, never followed."""
    # deepest paths first, so a created symlink is removed after what lies below it
    for s in sorted(saved, key=lambda s: s.rel.count("/"), reverse=True):
        try:
            if s.content is None:
                tree.remove(s.rel)
            elif isinstance(s.content, str):
                tree.symlink(s.rel, s.content, owner=owner)
            else:
                tree.write(s.rel, s.content, mode=s.mode, owner=owner)
        except (OSError, UntrustedFile):  # its folder is gone or is a link or a file now
            continue
