"""Git on the host, never with a repository's own configuration.

A repository's ``config`` (and any file it includes) and its attributes name
commands that git runs: ``filter.<x>.smudge``, ``clean`` and ``process``,
``core.fsmonitor``, hooks, ``diff.external``. Pointed at an uploaded bare
repository, ``git archive`` ran its smudge filter as root on the service
host (issue 21), and ``git apply`` in a work tree ran its clean filter.

So no git command here reads a repository's git directory. git reads a
private git directory we wrote (our ``config``, no hooks, no ``info/``),
with the system and global configuration off; what it takes from the
repository is data only: its objects, refs and ``HEAD``, copied as regular
files (no link, no ``alternates`` naming other object stores), or its work
tree's files. :func:`export_head` writes HEAD's files itself from
``git cat-file``, which applies no filter, attribute or ``export-subst``.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from fixbugs.errors import InputError
from fixbugs.sandbox.hosttools import ToolRun, git_env, run_tool, stream_tool
from fixbugs.sandbox.patching import PatchResult, apply_patch

__all__ = [
    "GIT_TIMEOUT_S",
    "MAX_EXPORT_BYTES",
    "apply_diff",
    "export_head",
    "is_git_dir",
    "private_copy",
    "set_object_format",
]

MAX_EXPORT_BYTES = 1 << 30  # what HEAD may unpack to: a small pack can expand without end
# git on a large repository (ls-tree, apply) is slow, never this slow
GIT_TIMEOUT_S = 600.0
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_FILE_MODES = {"100644": 0o644, "100664": 0o644, "100755": 0o755}
_LINK_MODE = "120000"
# Copied from the repository's git directory: data git needs to read HEAD's
# tree, nothing that configures git or names another path.
_GIT_DATA = ("HEAD", "packed-refs", "objects", "refs")
_NOT_COPIED = frozenset({"objects/info/alternates", "objects/info/http-alternates"})


def is_git_dir(p: Path) -> bool:
    """``p`` looks like a git directory (bare, or a ``.git`` folder)."""
    return (p / "HEAD").is_file() and (p / "objects").is_dir() and (p / "refs").is_dir()


def _write_config(git_dir: Path, object_format: str) -> None:
    # the only configuration git sees: no filter, hook, fsmonitor or attributes file
    lines = [
        "[core]",
        f"\trepositoryformatversion = {0 if object_format == 'sha1' else 1}",
        "\tbare = true",
        f"\tattributesFile = {os.devnull}",
        f"\thooksPath = {os.devnull}",
        "\tfsmonitor = false",
    ]
    if object_format != "sha1":
        lines += ["[extensions]", f"\tobjectFormat = {object_format}"]
    (git_dir / "config").write_text("\n".join(lines) + "\n")


def _private_git_dir(git_dir: Path, source: Path | None) -> None:
    """A git directory of our own at ``git_dir``: ``source``'s data, or empty."""
    git_dir.mkdir()
    for sub in ("objects", "refs"):
        (git_dir / sub).mkdir()
    if source is None:
        (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
    else:
        for name in _GIT_DATA:
            _copy_data(source, git_dir, name)
    _write_config(git_dir, "sha1")


def private_copy(source: Path, dest: Path) -> None:
    """A private git directory at ``dest`` (a new path) with ``source``'s data and our config.

    What ``--branch`` (:mod:`fixbugs.run.branch`) commits in: the
    repository's objects, refs and ``HEAD`` as regular files, none of its
    configuration, hooks or alternates. SHA-1 until :func:`set_object_format`.
    """
    _private_git_dir(dest, source)


def set_object_format(git_dir: Path, object_format: str) -> None:
    """Rewrite our private ``git_dir``'s config for ``object_format`` (sha1, sha256)."""
    _write_config(git_dir, object_format)


def _copy_data(source: Path, dest: Path, name: str) -> None:
    """Copy ``source/name`` (a file or a folder) to ``dest``: regular files and folders only."""
    try:
        st = os.lstat(source / name)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode):
        _copy_file(source / name, dest / name)
        return
    if not stat.S_ISDIR(st.st_mode):
        return
    top = source / name
    for dirpath, dirnames, filenames in os.walk(top):
        here = Path(dirpath)
        rel = here.relative_to(source)
        (dest / rel).mkdir(exist_ok=True)
        dirnames[:] = [d for d in dirnames if not (here / d).is_symlink()]
        for f in filenames:
            if (rel / f).as_posix() not in _NOT_COPIED:
                _copy_file(here / f, dest / rel / f)


def _copy_file(src: Path, dst: Path) -> None:
    """Copy ``src`` if it is a regular file; a link, FIFO or device is left out."""
    try:
        fd = os.open(src, _READ)
    except OSError:
        return
    with os.fdopen(fd, "rb") as f:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            with dst.open("xb") as out:
                shutil.copyfileobj(f, out, 1 << 20)


def _git(git_dir: Path, *args: str) -> ToolRun:
    return run_tool(
        ["git", f"--git-dir={git_dir}", *args], timeout_s=GIT_TIMEOUT_S, cwd=git_dir, env=git_env()
    )


def _head_tree(git_dir: Path, shown: Path) -> bytes:
    """``ls-tree -r -z`` of HEAD; the object format is SHA-1 or, failing that, SHA-256."""
    done = _git(git_dir, "ls-tree", "-r", "-z", "--full-tree", "HEAD")
    if done.returncode == 0:
        return done.stdout
    _write_config(git_dir, "sha256")
    again = _git(git_dir, "ls-tree", "-r", "-z", "--full-tree", "HEAD")
    if again.returncode == 0:
        return again.stdout
    reason = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
    raise InputError(
        f"repository {shown} has no commit to read ({(reason or ['git ls-tree failed'])[0]}); "
        "commit the code or give the work tree"
    )


@dataclass(frozen=True)
class _Entry:
    mode: str
    oid: str
    parts: tuple[str, ...]


def _entries(listing: bytes) -> list[_Entry]:
    """Blobs of an ``ls-tree -r -z`` listing whose path is safe to write below a root."""
    out = []
    for record in listing.split(b"\0"):
        head, tab, raw = record.partition(b"\t")
        fields = head.split()
        if not tab or len(fields) != 3 or fields[1] != b"blob":
            continue  # submodules (commits) and malformed lines
        parts = tuple(os.fsdecode(raw).split("/"))
        # git refuses such names on checkout; a crafted tree object can hold them
        if any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
            continue
        mode = fields[0].decode()
        if mode in _FILE_MODES or mode == _LINK_MODE:
            out.append(_Entry(mode, fields[2].decode(), parts))
    return out


def export_head(git_dir: Path, dest: Path, *, max_bytes: int = MAX_EXPORT_BYTES) -> None:
    """Write the files of ``git_dir``'s HEAD under ``dest`` (a new folder), as committed.

    Regular files keep their executable bit; a symlink is written only when
    it points inside ``dest`` from a folder that is no link itself (what
    ``tarfile``'s ``data`` filter allows). Submodules, ``.git`` and names
    with ``..`` are left out. Over ``max_bytes`` in all is an error.
    """
    if shutil.which("git") is None:
        raise InputError(f"{git_dir} is a git repository without a work tree and git is missing")
    with tempfile.TemporaryDirectory(prefix="fixbugs-git-") as tmp:
        private = Path(tmp) / "git"
        _private_git_dir(private, git_dir)
        entries = _entries(_head_tree(private, git_dir))
        ids = Path(tmp) / "ids"
        ids.write_text("".join(e.oid + "\n" for e in entries))
        dest.mkdir()
        root = dest.resolve()
        with (
            ids.open("rb") as stdin,
            stream_tool(
                ["git", f"--git-dir={private}", "cat-file", "--batch"],
                stdin=stdin,
                cwd=private,
                env=git_env(),
            ) as blobs,
        ):
            links = _write_blobs(root, entries, blobs, max_bytes)
    # links last: no file is written through one
    for entry, target in links:
        _write_link(root, entry, target)


def _write_blobs(
    root: Path, entries: list[_Entry], out: IO[bytes], max_bytes: int
) -> list[tuple[_Entry, str]]:
    """Write each entry's blob from ``cat-file --batch`` output; return the links' targets."""
    links: list[tuple[_Entry, str]] = []
    total = 0
    for entry in entries:
        header = out.readline().split()
        if len(header) != 3:
            continue  # "<oid> missing"
        size = int(header[2])
        total += size
        if total > max_bytes:
            raise InputError(
                f"repository HEAD unpacks to more than {max_bytes >> 20} MiB; "
                "give a smaller repository or its work tree"
            )
        is_blob = header[1] == b"blob"
        if entry.mode == _LINK_MODE:
            data = out.read(size)
            if is_blob and size <= 4096:
                links.append((entry, os.fsdecode(data)))
        else:
            _write_file(root, entry, out, size if is_blob else -size)
        out.read(1)  # the newline after each object
    return links


def _write_file(root: Path, entry: _Entry, out: IO[bytes], size: int) -> None:
    """Copy ``abs(size)`` bytes of ``out`` to the entry's path; a negative size is only read."""
    path = root.joinpath(*entry.parts)
    fd = -1
    if size >= 0:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(path, flags, _FILE_MODES[entry.mode])
        except OSError:
            fd = -1  # a duplicate path, or a file where a folder is: a crafted tree
    left = abs(size)
    try:
        while left > 0:
            chunk = out.read(min(left, 1 << 20))
            if not chunk:
                break
            left -= len(chunk)
            if fd >= 0:
                _write_all(fd, chunk)
    finally:
        if fd >= 0:
            os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _write_link(root: Path, entry: _Entry, target: str) -> None:
    """Create the link if it stays inside ``root`` and no folder above it is a link."""
    if not target or os.path.isabs(target) or "\0" in target:
        return
    inside = os.path.normpath(os.path.join(*entry.parts[:-1], target))
    if inside == ".." or inside.startswith("../"):
        return
    path = root.joinpath(*entry.parts)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if os.path.realpath(path.parent) != str(path.parent) or os.path.lexists(path):
            return
        os.symlink(target, path)
    except OSError:
        return


def apply_diff(diff: str, work_tree: Path) -> PatchResult:
    """Apply ``diff`` to the files of ``work_tree``, running none of its git configuration.

    As the sandbox applies one (:mod:`fixbugs.sandbox.patching`: ``git
    apply``, else ``patch -p1``; all hunks or none), with host tools:
    ``git apply`` sees a private, empty git directory (so neither the work
    tree's ``.git/config`` filters nor its hooks exist for it) and the work
    tree's files.
    """
    if is_git_dir(work_tree) and not (work_tree / ".git").exists():
        return PatchResult(
            False, "none", (), f"{work_tree} is a git repository without a work tree"
        )
    tree = work_tree.resolve()
    with tempfile.TemporaryDirectory(prefix="fixbugs-git-") as tmp:
        private = Path(tmp) / "git"
        _private_git_dir(private, None)
        env = git_env({"GIT_DIR": str(private), "GIT_WORK_TREE": str(tree)})

        def run(argv: Sequence[str], stdin: bytes) -> ToolRun:
            return run_tool(argv, stdin=stdin, cwd=tree, env=env, timeout_s=GIT_TIMEOUT_S)

        return apply_patch(diff, tree, run)
