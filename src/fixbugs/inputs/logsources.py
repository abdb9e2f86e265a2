"""Where a log's lines come from: a file, a gzip file, a folder of logs or a zip of logs.

Users hand over logs the way their systems keep them: ``app.log``,
``app.log.1.gz``, a ``logs/`` folder, the ``logs.zip`` a CI job uploads. Each
is read as one or more byte streams (:func:`open_streams`) that
:func:`~fixbugs.inputs.logs.iter_log_records` reads a line at a time with
the same per-line cap, so memory stays bounded whatever the size:

- a folder is walked (:func:`folder_logs`): regular files only, no link
  followed (a link to ``/dev/zero`` or to another user's file is left out),
  at most :data:`MAX_FOLDER_FILES` files and :data:`MAX_FOLDER_DEPTH` levels;
- a zip is checked first (:func:`~fixbugs.inputs.archives.check_zip`, within
  :data:`LOG_ARCHIVE_LIMITS`: a member count and the members' declared size
  together), so a zip bomb is refused in one line before anything is
  decompressed; each member is then read as a stream, never past its
  declared size (``zipfile`` stops there), never written to disk, and its
  name is only a label. Folders, links, encrypted members and binary
  members are skipped, with one line saying how many.

A stream that breaks while read (a member whose data does not match its
header, a cut gzip file) ends there: the lines read so far stay evidence
(:data:`STREAM_ERRORS`).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import stat
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from fixbugs.inputs.archives import ArchiveLimits, check_zip
from fixbugs.inputs.inert import one_line
from fixbugs.inputs.textfile import GZIP_MAGIC, SNIFF_BYTES, looks_binary_document

__all__ = [
    "LOG_ARCHIVE_LIMITS",
    "MAX_FOLDER_DEPTH",
    "MAX_FOLDER_FILES",
    "STREAM_ERRORS",
    "ZIP_MAGIC",
    "ZipLogs",
    "check_zip_logs",
    "folder_logs",
    "open_streams",
]

ZIP_MAGIC = b"PK\x03\x04"
# logs compress 10-50x: a 100 MB upload of real logs declares a few GB
LOG_ARCHIVE_LIMITS = ArchiveLimits(max_members=2000, max_bytes=4 << 30)
MAX_FOLDER_FILES = 500
MAX_FOLDER_DEPTH = 8
STREAM_ERRORS = (OSError, EOFError, zipfile.BadZipFile, zlib.error)


@dataclass(frozen=True, slots=True)
class ZipLogs:
    """The text members of a checked zip, and one line for what was skipped."""

    members: tuple[str, ...]
    skipped: int  # binary, links, encrypted or broken

    @property
    def note(self) -> str | None:
        """One line for the members left out, if any."""
        if not self.skipped:
            return None
        return f"{self.skipped} member(s) not read (binary, a link, encrypted or broken)"


def folder_logs(folder: Path) -> tuple[list[Path], list[str]]:
    """The regular files below ``folder`` (a folder's files by name, then its subfolders),
    and a line for what was left out."""
    files: list[Path] = []
    links = special = 0
    truncated = deep = False
    stack: list[tuple[Path, int]] = [(folder, 0)]
    while stack and not truncated:
        here, depth = stack.pop()
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name, reverse=True)
        except OSError:
            special += 1
            continue
        subdirs: list[tuple[Path, int]] = []
        for entry in reversed(entries):
            if entry.is_symlink():
                links += 1
            elif entry.is_dir(follow_symlinks=False):
                if depth + 1 > MAX_FOLDER_DEPTH:
                    deep = True
                else:
                    subdirs.append((Path(entry.path), depth + 1))
            elif entry.is_file(follow_symlinks=False):
                if len(files) == MAX_FOLDER_FILES:
                    truncated = True
                    break
                files.append(Path(entry.path))
            else:
                special += 1
        stack.extend(reversed(subdirs))
    notes: list[str] = []
    skipped = [
        f"{links} link(s) not followed" if links else "",
        f"{special} special file(s) or unreadable folder(s)" if special else "",
        f"folders below {MAX_FOLDER_DEPTH} levels" if deep else "",
        f"files past the first {MAX_FOLDER_FILES}" if truncated else "",
    ]
    if any(skipped):
        notes.append(f"log folder {folder}: left out " + ", ".join(s for s in skipped if s))
    return files, notes


def _is_link(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def _candidates(zf: zipfile.ZipFile) -> tuple[list[zipfile.ZipInfo], int]:
    """The members that may be logs (no folder, link or encrypted one), and how many were not."""
    out: list[zipfile.ZipInfo] = []
    skipped = 0
    for info in zf.infolist():
        if info.is_dir():
            continue
        if _is_link(info) or info.flag_bits & 0x1:
            skipped += 1
        else:
            out.append(info)
    return out, skipped


def _is_text(stream: IO[bytes]) -> bool:
    """Whether ``stream`` starts as text; it is rewound either way."""
    head = stream.read(SNIFF_BYTES)
    stream.seek(0)
    return bool(head) and not looks_binary_document(head)


def check_zip_logs(p: Path) -> ZipLogs:
    """Check the zip at ``p`` within the limits (an InputError in one line past them) and
    sniff each member: the members that read as text logs."""
    kept: list[str] = []
    with p.open("rb") as f:
        check_zip(f, LOG_ARCHIVE_LIMITS, f"log archive {p}")
        with zipfile.ZipFile(f) as zf:
            infos, skipped = _candidates(zf)
            for info in infos:
                try:
                    with zf.open(info) as member, _decoded(member) as stream:
                        text = _is_text(stream)
                except (*STREAM_ERRORS, NotImplementedError, RuntimeError):
                    text = False
                if text:
                    kept.append(info.filename)
                elif info.file_size:
                    skipped += 1
    return ZipLogs(tuple(kept), skipped)


@contextlib.contextmanager
def _decoded(stream: IO[bytes]) -> Iterator[IO[bytes]]:
    """``stream`` read through gzip when it starts with gzip's magic bytes."""
    if stream.read(2) == GZIP_MAGIC:
        stream.seek(0)
        with gzip.GzipFile(fileobj=stream) as g:
            yield cast(IO[bytes], g)
    else:
        stream.seek(0)
        yield stream


def open_streams(p: Path) -> Iterator[tuple[str, IO[bytes]]]:
    """(label, byte stream) for each text of the log ``p``: the file itself (through gzip
    if compressed) or each text member of a zip, checked first within the limits. Read
    each stream before taking the next."""
    with p.open("rb") as f:
        if f.read(4) != ZIP_MAGIC:
            f.seek(0)
            with _decoded(f) as stream:
                yield p.name, stream
            return
        f.seek(0)
        check_zip(f, LOG_ARCHIVE_LIMITS, f"log archive {p}")
        with zipfile.ZipFile(f) as zf:
            for info in _candidates(zf)[0]:
                try:
                    with zf.open(info) as member, _decoded(member) as stream:
                        if _is_text(stream):
                            yield f"{p.name}:{one_line(info.filename)[:200]}", stream
                except (*STREAM_ERRORS, NotImplementedError, RuntimeError):
                    continue  # broken, or a compression method or password zipfile cannot read
