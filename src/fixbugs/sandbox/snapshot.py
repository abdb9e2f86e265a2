"""The copy's files as git trees, written without letting git look at the copy.

:meth:`Sandbox.diff` compares the copy with its baseline through git, on the
host. It ran ``git add -A`` over the copy, so git walked what the
repository's tests had written there: an empty nested repository (``git
init sub``) failed every diff, a nested one with a commit became a gitlink
(its files left out), a ``sub/.git`` *file* made git follow its ``gitdir:``
to a host repository and put that repository's HEAD into the diff, a
``.GIT`` folder failed it, a FIFO named ``.gitignore`` hung it, and the
copy's ``.gitattributes`` rewrote or hid what it compared.

So git never reads the copy. :meth:`TreeStore.snapshot` walks it itself
(``lstat``, no link followed, every folder opened below the last without
following a link): regular files and links are data, and every entry named
``.git`` (in any case) is left out, folder, file or link. It writes their
blobs and trees into our own git directory as git would (same object ids),
with no filter, attribute or encoding applied. Which new paths count is
git's ``.gitignore`` matching, asked of ``git check-ignore`` in a *shadow*
tree that holds only the folders and copies of the regular ``.gitignore``
files (the copy's own paths, so a FIFO or link there is never opened). The
diff compares two tree objects in a bare git directory, whose only
configuration is ours: no work tree, so no attributes of the copy either.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import stat
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from fixbugs.sandbox.hosttools import ToolRun, git_env, run_tool
from fixbugs.sandbox.untrusted import UntrustedFile, open_folder, read_untrusted_sync

__all__ = ["TreeStore"]

_EXCLUDE = "__pycache__/\n*.pyc\n.pytest_cache/\n.mypy_cache/\n.ruff_cache/\n.coverage\n"
_CONFIG = (
    "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
    f"\tattributesFile = {os.devnull}\n\texcludesFile = {os.devnull}\n"
    f"\thooksPath = {os.devnull}\n\tfsmonitor = false\n"
)
_BASELINE_REF = "refs/fixbugs/baseline"
_GIT_S = 600.0  # one snapshot or diff of a large copy, never this slow
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
_MAX_GITIGNORE_BYTES = 1 << 20
_CHUNK = 1 << 20
_TOP = b":(top)"
_TREE, _LINK, _EXEC, _PLAIN = b"40000", b"120000", b"100755", b"100644"


@dataclass(frozen=True)
class _Node:
    """One entry of the copy as git records it: its mode and object id (hex)."""

    mode: bytes
    oid: str


class TreeStore:
    """A private git directory holding snapshots of one copy, and diffs between them.

    Only this class writes in ``git_dir``; git reads it with the system and
    global configuration off and our ``config``. The ignore shadow is made
    in ``scratch`` (the sandbox's base, outside the copy), one per walk.
    Both are in the sandbox's base, root's and closed to the sandbox uid
    (see :class:`fixbugs.sandbox.Sandbox`): nothing here writes into the copy,
    which is only read, one descriptor at a time.
    """

    def __init__(self, git_dir: Path, *, scratch: Path) -> None:
        self.git_dir = git_dir
        self.scratch = scratch
        # object folders of the baseline this store reads but never writes (``borrow``)
        self._borrowed: tuple[Path, ...] = ()

    def record_baseline(self, root: Path) -> None:
        """Create the git directory and record ``root``'s files as the baseline."""
        self._skeleton()
        (self.git_dir / _BASELINE_REF).write_text(self.snapshot(root, tracked=frozenset()) + "\n")

    def borrow(self, parent: TreeStore) -> None:
        """Create the git directory on ``parent``'s baseline, reading its objects in place.

        A fork's store (one per candidate) copied every object of the
        baseline: as many files as the repository has, written to disk
        before each candidate ran, nine tenths of a fork's time on fastapi's
        710 files (``scripts/fork-cost``). Git's
        ``objects/info/alternates`` lets this store read them where the
        baseline's store keeps them; it writes only the objects its own
        snapshots add. Those folders are root's and outside every copy, and
        ``parent``'s baseline must outlive this store, as the pristine tree
        it forks does.
        """
        self._skeleton()
        self._borrowed = parent._borrowed or (parent.git_dir / "objects",)
        alternates = "".join(f"{folder}\n" for folder in self._borrowed)
        (self.git_dir / "objects" / "info" / "alternates").write_text(alternates)
        (self.git_dir / _BASELINE_REF).write_text((parent.git_dir / _BASELINE_REF).read_text())

    def _skeleton(self) -> None:
        for sub in ("objects/info", "refs/fixbugs", "info"):
            (self.git_dir / sub).mkdir(parents=True)
        (self.git_dir / "HEAD").write_text("ref: refs/heads/main\n")
        (self.git_dir / "config").write_text(_CONFIG)
        (self.git_dir / "info" / "exclude").write_text(_EXCLUDE)

    def diff(self, root: Path) -> str:
        """The git-format unified diff (``a/``, ``b/``) of ``root`` against the baseline."""
        base = (self.git_dir / _BASELINE_REF).read_text().strip()
        listed = self._git("ls-tree", "-r", "-z", "--name-only", base).stdout
        tracked = frozenset(os.fsdecode(p) for p in listed.split(b"\0") if p)
        now = self.snapshot(root, tracked=tracked)
        done = self._git("diff", "--no-color", "--no-ext-diff", "--binary", base, now, "--")
        return done.stdout.decode("utf-8", errors="replace")

    # --- the walk --------------------------------------------------------------

    def snapshot(self, root: Path, *, tracked: frozenset[str]) -> str:
        """Write ``root``'s files as git objects; the id of its tree.

        A path of ``tracked`` (the baseline's) counts whatever ignore rule
        matches it now, as for ``git add -A``; a new path counts unless
        git's ignore rules (the copy's ``.gitignore`` files, our exclude)
        leave it out, and an ignored folder is not walked.
        """
        tracked_dirs = frozenset(
            "/".join(parts[:i])
            for parts in (p.split("/") for p in tracked)
            for i in range(1, len(parts))
        )
        nodes: dict[str, _Node] = {}
        with tempfile.TemporaryDirectory(prefix="fixbugs-ignore-", dir=self.scratch) as tmp:
            shadow = Path(tmp)
            level = [""]
            while level:
                listed = [
                    (rel, mode) for folder in level for rel, mode in _entries(root, folder, shadow)
                ]
                fresh = [
                    rel
                    for rel, mode in listed
                    if rel not in (tracked_dirs if mode == _TREE else tracked)
                ]
                ignored = self._ignored(shadow, fresh)
                kept = [(rel, mode) for rel, mode in listed if rel not in ignored]
                level = [rel for rel, mode in kept if mode == _TREE]
                for folder, names in _by_folder((rel, mode) for rel, mode in kept if mode != _TREE):
                    nodes.update(self._blobs(root, folder, names))
        return self._trees(nodes)

    def _ignored(self, shadow: Path, paths: list[str]) -> frozenset[str]:
        if not paths:
            return frozenset()
        # check-ignore takes pathspecs and no "literal" magic; after "top" magic
        # the rest is the path as it is (a leading ":" included), and is echoed so
        done = self._git(
            f"--work-tree={shadow}",
            "check-ignore",
            "--no-index",
            "-z",
            "--stdin",
            stdin=b"".join(_TOP + os.fsencode(p) + b"\0" for p in paths),
            cwd=shadow,
            ok=(0, 1),  # 1: nothing is ignored
        )
        echoed = (p.removeprefix(_TOP) for p in done.stdout.split(b"\0") if p)
        return frozenset(os.fsdecode(p) for p in echoed)

    # --- objects ---------------------------------------------------------------

    def _blobs(
        self, root: Path, folder: str, names: list[tuple[str, bytes]]
    ) -> Iterator[tuple[str, _Node]]:
        """Blobs of ``folder``'s files and links; one that is gone or changed type is skipped."""
        try:
            fd = open_folder(root, folder)
        except OSError:
            return
        try:
            for name, mode in names:
                rel = f"{folder}/{name}" if folder else name
                with contextlib.suppress(OSError, _NotData):
                    if mode == _LINK:
                        target = os.readlink(os.fsencode(name), dir_fd=fd)
                        yield rel, _Node(_LINK, self._write(b"blob", target))
                    else:
                        yield rel, self._file_blob(name, fd, rel)
        finally:
            os.close(fd)

    def _file_blob(self, name: str, folder_fd: int, rel: str) -> _Node:
        fd = os.open(name, _FILE, dir_fd=folder_fd)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise _NotData(rel)
            header = b"blob %d\0" % st.st_size
            digest = hashlib.sha1(header)
            size = 0
            for chunk in _chunks(fd):
                digest.update(chunk)
                size += len(chunk)
            if size != st.st_size:
                raise RuntimeError(f"{rel!r} changed while the sandbox's diff read it")
            oid = digest.hexdigest()
            mode = _EXEC if st.st_mode & stat.S_IXUSR else _PLAIN
            if not self._has(oid):
                os.lseek(fd, 0, os.SEEK_SET)
                self._store(self._object_path(oid), oid, header, _chunks(fd), rel)
            return _Node(mode, oid)
        finally:
            os.close(fd)

    def _trees(self, nodes: dict[str, _Node]) -> str:
        """Write the trees above ``nodes`` (path -> node); the root tree's id."""
        children: dict[str, dict[bytes, _Node]] = {"": {}}
        for rel, node in nodes.items():
            folder, _, name = rel.rpartition("/")
            children.setdefault(folder, {})[os.fsencode(name)] = node
            while folder:  # every folder above holds a tree, even with no file of its own
                folder = folder.rpartition("/")[0]
                children.setdefault(folder, {})
        oid = ""
        # deepest folders first, so each tree's subtrees are written before it
        for folder in sorted(children, key=lambda f: (f.count("/"), f != ""), reverse=True):
            entries = children[folder]
            # git orders a tree's entries by name, a folder's name as if it ended in "/"
            ordered = sorted(entries, key=lambda n: n + b"/" if entries[n].mode == _TREE else n)
            body = b"".join(
                entries[n].mode + b" " + n + b"\0" + bytes.fromhex(entries[n].oid) for n in ordered
            )
            oid = self._write(b"tree", body)
            if folder:
                parent, _, name = folder.rpartition("/")
                children.setdefault(parent, {})[os.fsencode(name)] = _Node(_TREE, oid)
        return oid

    def _write(self, kind: bytes, data: bytes) -> str:
        header = kind + b" %d\0" % len(data)
        oid = hashlib.sha1(header + data).hexdigest()
        if not self._has(oid):
            self._store(self._object_path(oid), oid, header, (data,), oid)
        return oid

    def _object_path(self, oid: str) -> Path:
        return self.git_dir / "objects" / oid[:2] / oid[2:]

    def _has(self, oid: str) -> bool:
        """The object is in this store or in a borrowed one (git reads both)."""
        rest = Path(oid[:2]) / oid[2:]
        return self._object_path(oid).exists() or any(
            (folder / rest).exists() for folder in self._borrowed
        )

    def _store(
        self, path: Path, oid: str, header: bytes, chunks: Iterable[bytes], rel: str
    ) -> None:
        """Write a loose object (zlib of header and data), atomically, checking its id again."""
        path.parent.mkdir(exist_ok=True)
        deflate = zlib.compressobj(1)
        digest = hashlib.sha1(header)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="tmp_obj_")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(deflate.compress(header))
                for chunk in chunks:
                    digest.update(chunk)
                    out.write(deflate.compress(chunk))
                out.write(deflate.flush())
            if digest.hexdigest() != oid:
                raise RuntimeError(f"{rel!r} changed while the sandbox's diff read it")
            os.chmod(tmp, 0o444)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # --- git -------------------------------------------------------------------

    def _git(
        self, *args: str, stdin: bytes = b"", cwd: Path | None = None, ok: tuple[int, ...] = (0,)
    ) -> ToolRun:
        argv = ["git", f"--git-dir={self.git_dir}", "-c", "safe.directory=*", *args]
        env = git_env({"HOME": str(self.git_dir), "LC_ALL": "C"})
        done = run_tool(argv, stdin=stdin, cwd=cwd or self.git_dir, env=env, timeout_s=_GIT_S)
        if done.timed_out or done.returncode not in ok:
            raise RuntimeError(f"git {shlex.join(args)} failed in sandbox: {done.said()}")
        return done


class _NotData(Exception):
    """An entry that is no regular file any more (a FIFO, a device): not in the snapshot."""


def _entries(root: Path, folder: str, shadow: Path) -> Iterator[tuple[str, bytes]]:
    """``folder``'s folders, files and links (relative path, git mode); its shadow too.

    Each listed folder gets its shadow folder (``check-ignore`` tells a
    folder by ``lstat``), and the folder's ``.gitignore``, if a regular
    file, its copy there. Entries named ``.git`` in any case are left out.
    """
    try:
        fd = open_folder(root, folder)
    except OSError:
        return
    try:
        here = shadow / folder if folder else shadow
        with os.scandir(fd) as listing:
            found = list(listing)
        for entry in found:
            if entry.name.lower() == ".git":
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            rel = f"{folder}/{entry.name}" if folder else entry.name
            if stat.S_ISDIR(st.st_mode):
                (here / entry.name).mkdir()
                yield rel, _TREE
            elif stat.S_ISLNK(st.st_mode):
                yield rel, _LINK
            elif stat.S_ISREG(st.st_mode):
                if entry.name == ".gitignore":
                    _copy_gitignore(root, rel, here / entry.name)
                yield rel, _PLAIN
    finally:
        os.close(fd)


def _copy_gitignore(root: Path, rel: str, dst: Path) -> None:
    with contextlib.suppress(UntrustedFile):
        data = read_untrusted_sync(root / rel, max_bytes=_MAX_GITIGNORE_BYTES, within=root)
        dst.write_bytes(data)


def _by_folder(paths: Iterable[tuple[str, bytes]]) -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    grouped: dict[str, list[tuple[str, bytes]]] = {}
    for rel, mode in paths:
        folder, _, name = rel.rpartition("/")
        grouped.setdefault(folder, []).append((name, mode))
    yield from grouped.items()


def _chunks(fd: int) -> Iterator[bytes]:
    while chunk := os.read(fd, _CHUNK):
        yield chunk
