"""Reading a file a sandboxed command could have written.

Anything in a copy where a test has run is the test's to shape: a FIFO
(an ordinary ``open`` blocks forever), a symlink to ``/dev/zero`` or to a
host secret (an ordinary read follows it, unbounded, as root), a file of
gigabytes. :func:`read_untrusted_sync` opens without following links and
without blocking, accepts only a regular file, and reads at most
``max_bytes``; :func:`read_untrusted` does so off the event loop, under a
timeout, so a service's loop never waits on a sandbox's file.
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

__all__ = ["UntrustedFile", "not_a_regular_file", "read_untrusted", "read_untrusted_sync"]

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)


class UntrustedFile(Exception):
    """A file written by a sandboxed command that the agent refuses to read."""


def _open_beneath(path: Path, within: Path | None) -> int:
    """Open ``path``, following no link at all below ``within`` (the trusted part)."""
    if within is None:
        return os.open(path, _FLAGS)
    rel = path.relative_to(within)
    fd = os.open(within, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in rel.parts[:-1]:
            nxt = os.open(
                part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd
            )
            os.close(fd)
            fd = nxt
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
