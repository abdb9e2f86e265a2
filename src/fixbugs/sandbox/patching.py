"""Applying a unified diff to a tree: the one sequence of tools, fallback and roll-back.

The sandbox (its copy), the test workspace (its copy) and ``--apply`` and the
scorer (:func:`fixbugs.inputs.hostgit.apply_diff`, a tree on the host) all
apply a diff through :func:`apply_patch`; each says only how a tool runs
in its tree (contained, or a plain host tool, and with which git settings).

``git apply`` goes first: it checks every hunk before writing any, and
refuses ``..`` paths and writes through symlinks. ``patch -p1`` is the
fallback; it is not atomic, so it is dry-run first, and when it fails all
the same every path the diff names is put back as it was. Only a path
whose folder, links resolved, is inside the tree is saved or put back.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbugs.sandbox.hosttools import ToolRun
from fixbugs.sandbox.untrusted import UntrustedFile, read_untrusted_sync

__all__ = ["PatchResult", "ToolRunner", "apply_patch", "diff_files"]

_DIFF_FILE = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(.+?)\s*$", re.MULTILINE)
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


def diff_files(diff: str) -> tuple[str, ...]:
    """The paths a unified diff's ``---``/``+++`` headers name, in order, once each."""
    return tuple(dict.fromkeys(f for f in _DIFF_FILE.findall(diff) if f != "/dev/null"))


def apply_patch(diff: str, root: Path, run: ToolRunner, *, owner: int | None = None) -> PatchResult:
    """Apply ``diff`` to the tree at ``root``, each tool through ``run``; all of it or nothing.

    ``owner`` is the uid that a file put back after a failed ``patch`` gets
    (the sandbox's), or None to leave it to whoever writes it.
    """
    files = diff_files(diff)
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
        done = run(attempt.apply, data)
        if done.ok:
            return PatchResult(True, attempt.tool, files, done.said())
        _restore(root, saved, owner)
        messages.append(f"{attempt.tool}: {done.said()}")
    return PatchResult(False, "none", files, "\n".join(messages))


def _inside(root: Path, path: Path) -> bool:
    """``path``'s folder, symlinks resolved, is ``root`` or below it."""
    parent = os.path.realpath(path.parent)
    return parent == str(root) or parent.startswith(str(root) + os.sep)


def _save(root: Path, files: Sequence[str]) -> dict[Path, bytes | str | None]:
    """What each named path inside ``root`` holds: bytes, a link's target (str), or None."""
    saved: dict[Path, bytes | str | None] = {}
    for rel in files:
        # patch -p1 strips the first component, whatever the prefix is
        for candidate in {rel, rel.split("/", 1)[-1]}:
            path = root / candidate
            if not _inside(root, path):
                continue
            if path.is_symlink():
                saved[path] = os.readlink(path)
            elif path.is_file():
                try:
                    saved[path] = read_untrusted_sync(path, max_bytes=_MAX_SAVED_BYTES)
                except UntrustedFile:
                    continue
            elif not path.exists():
                saved[path] = None
    return saved


def _restore(root: Path, saved: Mapping[Path, bytes | str | None], owner: int | None) -> None:
    # deepest paths first, so a created symlink is removed after what lies below it
    for path in sorted(saved, key=lambda p: len(p.parts), reverse=True):
        if not _inside(root, path):
            continue
        content = saved[path]
        if path.is_symlink() or path.is_file():
            path.unlink()
        if isinstance(content, str):
            os.symlink(content, path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        if content is not None and owner is not None:
            os.lchown(path, owner, owner)
