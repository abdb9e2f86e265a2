"""Each job's files under one workspace directory, and nothing outside it.

Uploads are untrusted: a file name or an archive member that is absolute,
climbs with ``..``, is deeper than ``MAX_DEPTH`` folders, is not valid
UTF-8, or is a link, device or FIFO is rejected (the whole submission, with
a one-line reason). An archive's headers, entries and declared sizes are
checked before it is opened (:mod:`fixbugs.inputs.archives`: ``tarfile``
would read a 1 GiB long-name header whole), and every byte written is
counted against the limits, so an archive bomb stops at the limit instead
of filling memory or the disk.
"""

from __future__ import annotations

import lzma
import shutil
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from fixbugs.errors import InputError
from fixbugs.inputs.archives import ArchiveLimits, TooLarge, check_tar, check_zip

__all__ = ["MAX_DEPTH", "Limits", "TooLarge", "UnsafePath", "Workspace", "safe_relpath"]

_CHUNK = 1 << 16
_NAME_MAX = 255  # bytes in one path component (Linux NAME_MAX)
_PATH_MAX = 4096
MAX_DEPTH = 64  # folders in one path (a real tree's deepest is a few dozen)
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    RuntimeError,
    NotImplementedError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
)


class UnsafePath(InputError):
    """A name that would reach outside the job's directory."""


@dataclass(frozen=True, slots=True)
class Limits:
    max_file_bytes: int = 5 << 20  # one report, log or trace
    max_archive_bytes: int = 50 << 20  # the repository, unpacked
    max_archive_members: int = 5000

    def archive(self) -> ArchiveLimits:
        """What an uploaded archive is checked against before it is opened."""
        return ArchiveLimits(max_members=self.max_archive_members, max_bytes=self.max_archive_bytes)


def safe_relpath(name: str) -> PurePosixPath:
    """``name`` as a relative path that stays inside its root, or :class:`UnsafePath`."""
    if not name or "\x00" in name:
        raise UnsafePath(f"path {name!r} is empty or holds a NUL byte")
    norm = name.replace("\\", "/")
    p = PurePosixPath(norm)
    if p.is_absolute() or norm.startswith("/") or (len(norm) > 1 and norm[1] == ":"):
        raise UnsafePath(f"path {name!r} is absolute; give paths relative to the repository")
    parts = [s for s in p.parts if s not in ("", ".")]
    if not parts or any(s == ".." for s in parts):
        raise UnsafePath(f"path {name!r} would escape the workspace")
    try:
        norm.encode("utf-8")
    except UnicodeEncodeError:
        raise UnsafePath(f"path {name[:80]!r} is not valid UTF-8; rename it") from None
    if len(parts) > MAX_DEPTH:
        raise UnsafePath(f"path {name[:80]!r}... is {len(parts)} levels deep (limit {MAX_DEPTH})")
    if any(len(s.encode()) > _NAME_MAX for s in parts):
        raise UnsafePath(f"path {name[:80]!r}... has a name over {_NAME_MAX} bytes")
    if len(norm.encode()) > _PATH_MAX:
        raise UnsafePath(f"path {name[:80]!r}... is over {_PATH_MAX} bytes")
    return PurePosixPath(*parts)


class _Member:
    """Turns a filesystem error writing one archive member into a 400's one-liner."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: object, tb: object) -> None:
        if exc_type is None or not issubclass(exc_type, OSError):
            return
        shown = self.name if len(self.name) <= 120 else self.name[:120] + "..."
        if issubclass(exc_type, (IsADirectoryError, NotADirectoryError, FileExistsError)):
            raise UnsafePath(
                f"archive entry {shown!r} is both a file and a folder (or under a file)"
            ) from None
        why = getattr(exc, "strerror", None) or "cannot be written"
        raise InputError(f"archive entry {shown!r}: {why}") from None


def _copy_limited(src: IO[bytes], dst: Path, budget: int, what: str) -> int:
    written = 0
    with dst.open("wb") as out:
        while chunk := src.read(_CHUNK):
            written += len(chunk)
            if written > budget:
                raise TooLarge(f"{what} is larger than the limit of {budget} bytes")
            out.write(chunk)
    return written


class Workspace:
    """``root/jobs/<job>/``: report, logs/, traces/ and repo/ of one job."""

    def __init__(self, root: Path, limits: Limits | None = None) -> None:
        self.root = root.resolve()
        self.limits = limits or Limits()
        (self.root / "jobs").mkdir(parents=True, exist_ok=True)

    def job_dir(self, job: str) -> Path:
        d = (self.root / "jobs" / safe_relpath(job)).resolve()
        if not d.is_relative_to(self.root / "jobs"):
            raise UnsafePath(f"job id {job!r} would escape the workspace")
        return d

    def create(self, job: str) -> Path:
        d = self.job_dir(job)
        d.mkdir(parents=True, exist_ok=False)
        return d

    def remove(self, job: str) -> None:
        shutil.rmtree(self.job_dir(job), ignore_errors=True)

    def save(self, job: str, sub: str, name: str, data: IO[bytes]) -> Path:
        """Save one uploaded file as ``<job>/<sub>/<basename>``, within the file limit."""
        rel = safe_relpath(name)
        if len(rel.parts) != 1:
            raise UnsafePath(f"file name {name!r} holds a directory; upload plain file names")
        d = self.job_dir(job) / sub
        d.mkdir(parents=True, exist_ok=True)
        dst = d / rel.name
        with _Member(name):
            _copy_limited(data, dst, self.limits.max_file_bytes, f"file {name!r}")
        return dst

    def write_text(self, job: str, name: str, text: str) -> Path:
        if len(text.encode()) > self.limits.max_file_bytes:
            raise TooLarge(f"{name} is larger than the limit of {self.limits.max_file_bytes} bytes")
        dst = self.job_dir(job) / safe_relpath(name)
        dst.write_text(text)
        return dst

    def unpack(self, job: str, name: str, data: IO[bytes]) -> Path:
        """Unpack a repository archive (.tar, .tar.gz, .tgz, .zip) into ``<job>/repo``."""
        dest = self.job_dir(job) / "repo"
        dest.mkdir(parents=True, exist_ok=True)
        lower = name.lower()
        if lower.endswith(".zip"):
            self._unzip(data, dest)
        elif lower.endswith((".tar", ".tar.gz", ".tgz")):
            self._untar(data, dest)
        else:
            raise InputError(f"repository archive {name!r}: give a .tar, .tar.gz, .tgz or .zip")
        return _single_top(dest)

    def _untar(self, data: IO[bytes], dest: Path) -> None:
        left = self.limits.max_archive_bytes
        mode = check_tar(data, self.limits.archive(), "repository archive")
        try:
            with tarfile.open(fileobj=data, mode=mode) as tar:
                for n, m in enumerate(tar):
                    if n >= self.limits.max_archive_members:
                        raise TooLarge(
                            f"archive has more than {self.limits.max_archive_members} entries"
                        )
                    rel = safe_relpath(m.name)
                    if not (m.isdir() or m.isfile()):
                        raise UnsafePath(f"archive entry {m.name!r} is a link or special file")
                    with _Member(m.name):
                        if m.isdir():
                            (dest / rel).mkdir(parents=True, exist_ok=True)
                            continue
                        src = tar.extractfile(m)
                        if src is None:
                            continue
                        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                        left -= _copy_limited(src, dest / rel, left, "the unpacked repository")
        except (tarfile.TarError, EOFError, zlib.error, lzma.LZMAError) as exc:
            raise InputError(f"repository archive is not a readable tar file: {exc}") from None

    def _unzip(self, data: IO[bytes], dest: Path) -> None:
        left = self.limits.max_archive_bytes
        check_zip(data, self.limits.archive(), "repository archive")
        try:
            with zipfile.ZipFile(data) as zf:
                infos = zf.infolist()
                if len(infos) > self.limits.max_archive_members:
                    raise TooLarge(
                        f"archive has more than {self.limits.max_archive_members} entries"
                    )
                for info in infos:
                    rel = safe_relpath(info.filename)
                    if (info.external_attr >> 16) & 0o170000 == 0o120000:
                        raise UnsafePath(f"archive entry {info.filename!r} is a link")
                    with _Member(info.filename):
                        if info.is_dir():
                            (dest / rel).mkdir(parents=True, exist_ok=True)
                            continue
                        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                        with zf.open(info) as src:
                            left -= _copy_limited(src, dest / rel, left, "the unpacked repository")
        except _ZIP_ERRORS as exc:  # RuntimeError: encrypted; NotImplementedError: a method
            raise InputError(f"repository archive is not a readable zip file: {exc}") from None


def _single_top(dest: Path) -> Path:
    """An archive of one top directory (``git archive --prefix``) is that directory."""
    entries = list(dest.iterdir())
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return dest
