"""Files a sandboxed command could touch: read back bounded, written through a descriptor.

Anything in a copy where a test has run is the test's to shape: a FIFO
(an ordinary ``open`` blocks forever), a symlink to ``/dev/zero`` or to a
host secret (an ordinary read follows it, unbounded, as root), a hard link
to a file FixBugs would then rewrite, a file of gigabytes, a folder swapped
for a link to ``/root``.

Reading: :func:`read_untrusted_sync` opens without following links and
without blocking, accepts only a regular file, and reads at most
``max_bytes``; :func:`read_untrusted` does so off the event loop, under a
timeout, so a service's loop never waits on a sandbox's file.

Writing: FixBugs writes on the host into a folder a sandboxed command can
see only through :class:`HostFolder`. It holds the folder by a descriptor
taken before any command ran there (and checks, at each write, that the
path still names that folder and is no link); every folder below it is
opened with ``O_NOFOLLOW | O_DIRECTORY``; a file is created fresh under a
temporary name (``O_CREAT | O_EXCL | O_NOFOLLOW``) and renamed over the
name (``os.replace`` with both descriptors). So an existing file is never
opened for writing: a planted link is replaced, not followed, a planted
hard link's inode is never written, and a planted FIFO is never opened.
:func:`remove_tree` deletes such a folder without following a link.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from fixbugs.errors import InputError
from fixbugs.sandbox.executor import ClosedOnExit

__all__ = [
    "HostFolder",
    "UntrustedFile",
    "not_a_regular_file",
    "open_folder",
    "read_untrusted",
    "read_untrusted_sync",
    "remove_tree",
    "write_output",
]

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_TMP = ".fixbugs-new-"
# makes the new entry under a temporary name (its first argument) in a folder (a descriptor)
_Maker = Callable[[str, int], None]


class UntrustedFile(Exception):
    """A file written by a sandboxed command that the agent refuses to read."""


def open_folder(root: Path, rel: str | PurePosixPath = "", *, dir_fd: int | None = None) -> int:
    """A descriptor of the folder ``root/rel``, following no link below ``root``.

    ``root`` is opened as given: a path no sandboxed command can change (the
    copy's own path, in a folder of ours) or, with ``dir_fd``, a name relative
    to that descriptor, opened without following a link. Each component of
    ``rel`` is opened relative to the last with ``O_NOFOLLOW | O_DIRECTORY``.
    """
    if dir_fd is None:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    else:
        fd = os.open(root, _DIR, dir_fd=dir_fd)
    try:
        for part in PurePosixPath(rel).parts:
            nxt = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_beneath(path: Path, within: Path | None) -> int:
    """Open ``path``, following no link at all below ``within`` (the trusted part)."""
    if within is None:
        return os.open(path, _FLAGS)
    rel = path.relative_to(within)
    fd = open_folder(within, PurePosixPath(*rel.parts[:-1]))
    try:
        return os.open(rel.parts[-1], _FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


def read_untrusted_sync(path: Path, *, max_bytes: int, within: Path | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file (not a link) of at most ``max_bytes``.

    With ``within`` (a trusted directory above ``path``), no directory
    between the two may be a link either.
    """
    try:
        fd = _open_beneath(path, within)
    except FileNotFoundError:
        raise UntrustedFile(f"{path.name}: not written") from None
    except OSError as exc:  # ELOOP: a symlink; ENXIO: a socket or a FIFO without writer
        raise UntrustedFile(f"{path.name}: refused ({os.strerror(exc.errno or 0)})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UntrustedFile(f"{path.name}: not a regular file")
        if st.st_size > max_bytes:
            raise UntrustedFile(f"{path.name}: {st.st_size} bytes, over the {max_bytes} cap")
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:  # it grew while we read
            raise UntrustedFile(f"{path.name}: over the {max_bytes} byte cap")
        return data
    finally:
        os.close(fd)


def not_a_regular_file(path: Path) -> str | None:
    """Why ``path`` is no readable file (a FIFO, a link, a socket), or None if it is one
    or is absent; it is neither opened nor followed, so a FIFO cannot block this."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else f"{path.name}: not a regular file"


async def read_untrusted(
    path: Path, *, max_bytes: int, timeout_s: float = 10.0, within: Path | None = None
) -> bytes:
    """:func:`read_untrusted_sync` in a worker thread, bounded by ``timeout_s``."""
    try:
        return await asyncio.wait_for(
            asyncio.to_thread(read_untrusted_sync, path, max_bytes=max_bytes, within=within),
            timeout_s,
        )
    except TimeoutError:
        raise UntrustedFile(f"{path.name}: not read within {timeout_s:g} s") from None


def write_output(path: Path, data: bytes, *, what: str) -> None:
    """Write a file the user named with the option ``what`` (``--json``, ``--pr-body``, ...).

    Users put reports inside the repository they debug, and a repository can
    commit a link at that name (``run.json -> /etc/passwd``): an ordinary
    write would follow it, as root. So the file is written fresh in its
    folder and renamed over the name through the folder's descriptor
    (:meth:`HostFolder.write`): whatever was there is replaced, never opened.
    A folder that cannot be written (missing, a link, no permission) is one
    line, :class:`~fixbugs.errors.InputError`.
    """
    path = path.expanduser()
    try:
        with HostFolder.open(path.parent) as folder:
            folder.write(path.name, data)
    except (OSError, UntrustedFile) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise InputError(f"{what}: cannot write {path}: {why}") from None


class HostFolder(ClosedOnExit):
    """A folder FixBugs writes into on the host, held by a descriptor (see the module).

    Take it (:meth:`open`, :meth:`make`) before a sandboxed command runs in
    the folder; each write then goes through the descriptor, and first
    checks that :attr:`path` still names this folder and is no link
    (:class:`UntrustedFile` if not). Close it (or leave its ``with`` block)
    when done.
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self.fd = fd
        st = os.fstat(fd)
        self._id = (st.st_dev, st.st_ino)

    @classmethod
    def open(cls, path: Path) -> HostFolder:
        """The folder at ``path``, a path no sandboxed command can change."""
        return cls(path, open_folder(path))

    @classmethod
    def make(cls, parent: Path, *, prefix: str, mode: int) -> HostFolder:
        """A new folder of ``parent`` (a path no sandboxed command can change) under a fresh
        name, ``prefix`` and random characters, its ``mode`` set through its descriptor."""
        pfd = open_folder(parent)
        try:
            for _ in range(100):
                name = prefix + secrets.token_hex(6)
                try:
                    os.mkdir(name, 0o700, dir_fd=pfd)
                except FileExistsError:
                    continue
                fd = os.open(name, _DIR, dir_fd=pfd)
                st = os.fstat(fd)
                if st.st_uid != os.geteuid():  # swapped between the two calls
                    os.close(fd)
                    raise UntrustedFile(f"{name}: replaced while FixBugs made it")
                os.fchmod(fd, mode)
                return cls(parent / name, fd)
            raise FileExistsError(f"no fresh folder name in {parent}")
        finally:
            os.close(pfd)

    def check(self) -> None:
        """Raise :class:`UntrustedFile` unless :attr:`path` is still this folder, no link."""
        try:
            st = os.lstat(self.path)
        except OSError:
            raise UntrustedFile(f"{self.path.name}: gone") from None
        if not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) != self._id:
            raise UntrustedFile(f"{self.path.name}: replaced since FixBugs opened it")

    def write(
        self, rel: str | PurePosixPath, data: bytes, *, mode: int = 0o644, owner: int | None = None
    ) -> None:
        """Put a new file of ``data`` at ``rel`` (its folders must exist and be no links).

        Whatever was at ``rel`` (a file, a link, a hard link, a FIFO) is
        replaced by the rename, never opened. ``owner`` (a uid, as its gid
        too) is given the file before it takes the name.
        """
        self._replace(rel, lambda tmp, fd: self._fill(tmp, fd, data, mode, owner))

    def symlink(self, rel: str | PurePosixPath, target: str, *, owner: int | None = None) -> None:
        """Put a new link to ``target`` at ``rel``, replacing whatever is there."""

        def make(tmp: str, fd: int) -> None:
            os.symlink(target, tmp, dir_fd=fd)
            if owner is not None:
                os.chown(tmp, owner, owner, dir_fd=fd, follow_symlinks=False)

        self._replace(rel, make)

    def remove(self, rel: str | PurePosixPath) -> None:
        """Remove the file or link at ``rel``, if any (a folder stays); nothing is followed."""
        self.check()
        path = PurePosixPath(rel)
        try:
            fd = open_folder(Path(path.parent), dir_fd=self.fd) if path.parent.parts else None
        except OSError:
            return
        try:
            where = self.fd if fd is None else fd
            st = os.stat(path.name, dir_fd=where, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(path.name, dir_fd=where)
        except FileNotFoundError:
            pass
        finally:
            if fd is not None:
                os.close(fd)

    def _replace(self, rel: str | PurePosixPath, make: _Maker) -> None:
        self.check()
        path = PurePosixPath(rel)
        fd = open_folder(Path(path.parent), dir_fd=self.fd) if path.parent.parts else None
        where = self.fd if fd is None else fd
        tmp = _TMP + secrets.token_hex(8)
        try:
            make(tmp, where)
            os.replace(tmp, path.name, src_dir_fd=where, dst_dir_fd=where)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=where)
            raise
        finally:
            if fd is not None:
                os.close(fd)

    @staticmethod
    def _fill(tmp: str, folder: int, data: bytes, mode: int, owner: int | None) -> None:
        fd = os.open(tmp, _NEW, 0o600, dir_fd=folder)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if owner is not None:
                os.fchown(fd, owner, owner)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)

    def chmod(self, mode: int) -> None:
        """Set the folder's own mode, through its descriptor."""
        os.fchmod(self.fd, mode)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def remove_tree(path: Path) -> None:
    """Delete the folder ``path`` and everything in it, following no link; errors ignored.

    On Linux ``shutil.rmtree`` is descriptor-based (``rmtree.avoids_symlink_attacks``,
    asserted by ``tests/security/test_host_writes.py``): every folder is opened by
    descriptor and checked against its ``lstat``, every entry is unlinked relative
    to it, and a link, at the top (refused) or below (unlinked), is never
    followed; a hard link loses a name, its inode is not written.
    """
    shutil.rmtree(path, ignore_errors=True)
