"""Archives checked before ``tarfile`` or ``zipfile`` opens them: bounded while streaming.

``tarfile`` reads a GNU long name (``././@LongLink``) or a pax record whole,
before any caller sees the member: a 1 MB ``.tar.gz`` whose long-name header
claims 1 GiB of zeros took the server from 124 MB to 1,170 MB before its 400
(issue 41). ``zipfile`` builds an object per central-directory record, so a
64 MB upload of tiny records is a million objects. Neither can be bounded
from outside once it starts, so an archive is scanned here first, in small
reads, and refused with one line at the first limit it passes:

- tar: the (decompressed) stream's 512-byte headers are read here, each with
  :meth:`tarfile.TarInfo.frombuf` (the same parse ``tarfile`` makes, so both
  agree on every member's type and size); a long name/link or pax header
  over ``max_header_bytes``, more than ``max_chain`` of them before one
  member, pax globals over ``max_global_bytes`` together, a pax ``size`` or
  GNU sparse record (they move where ``tarfile`` finds the next header),
  more than ``max_members`` members or over ``max_bytes`` of data are
  refused; the rest is skipped in 64 KiB reads, so the decompression is
  bounded too. :func:`check_tar` gives the mode to open the archive with,
  the compression it checked (never a guess that could differ).
- zip: the end record is found as ``zipfile`` finds it, then the central
  directory is read record by record: more than ``max_members`` records, a
  name over 4096 bytes or flagged UTF-8 and not, or declared sizes over
  ``max_bytes`` are refused. What is then decompressed is bounded by the
  caller's copy (a member is never read past its declared size).
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import re
import struct
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Literal, Protocol

from fixbugs.errors import InputError

__all__ = [
    "CASE_LIMITS",
    "ArchiveLimits",
    "ArchiveRefused",
    "TarMode",
    "TooLarge",
    "check_tar",
    "check_zip",
]

TarMode = Literal["r:", "r:gz", "r:bz2", "r:xz"]  # how tarfile opens a checked archive
_BLOCK = tarfile.BLOCKSIZE
_SKIP = 1 << 16
_EXTENDED = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)
_PAX = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE)
_PAX_RECORD = re.compile(rb"(\d+) ([^=]+)=")  # tarfile's own record pattern
_MAX_NAME = 4096


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


class ArchiveRefused(InputError):
    """An archive whose headers or names are past the limits (the service answers 400)."""


class TooLarge(InputError):
    """An upload over the size or count limits (the service answers 413)."""


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    max_members: int = 5000  # files, folders and other entries
    max_bytes: int = 50 << 20  # the members' data, declared, all together
    max_header_bytes: int = 64 << 10  # one GNU long name/link or pax header's data
    max_global_bytes: int = 64 << 10  # every pax global header's data, together
    max_chain: int = 4  # long-name/pax headers before one member


# an evaluation case's repository (``repo.tar.gz``): whole projects, headers as tight
CASE_LIMITS = ArchiveLimits(max_members=500_000, max_bytes=16 << 30)


def _kib(n: int) -> str:
    return f"{n >> 10} KiB" if n >= 1024 else f"{n} bytes"


def check_tar(data: IO[bytes], limits: ArchiveLimits, what: str = "archive") -> TarMode:
    """Scan the tar archive ``data`` (plain, gzip, bzip2 or xz) within ``limits``, rewind it,
    and give the ``tarfile.open`` mode that reads it (``"r:gz"``...); :class:`ArchiveRefused`
    or :class:`TooLarge` past a limit, :class:`InputError` for one that is no tar."""
    start = data.tell()
    magic = data.read(6)
    data.seek(start)
    comp: TarMode = "r:"
    if magic[:2] == b"\x1f\x8b":
        comp = "r:gz"
    elif magic[:3] == b"BZh":
        comp = "r:bz2"
    elif magic == b"\xfd7zXZ\x00":
        comp = "r:xz"
    try:
        with _decompressed(data, comp) as stream:
            _TarScan(stream, limits, what).run()
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise InputError(f"{what} is not a readable tar file: {exc}") from None
    finally:
        data.seek(start)
    return comp


@contextlib.contextmanager
def _decompressed(data: IO[bytes], comp: TarMode) -> Iterator[_Readable]:
    """``data`` read through its decompressor (closing it leaves ``data`` open)."""
    if comp == "r:gz":
        with gzip.GzipFile(fileobj=data, mode="rb") as gz:
            yield gz
    elif comp == "r:bz2":
        with bz2.BZ2File(data) as bz:
            yield bz
    elif comp == "r:xz":
        with lzma.LZMAFile(data) as xz:
            yield xz
    else:
        yield data


class _TarScan:
    """One pass over a tar stream's headers, in ``tarfile``'s order."""

    def __init__(self, stream: _Readable, limits: ArchiveLimits, what: str) -> None:
        self.stream, self.limits, self.what = stream, limits, what
        self.members = self.total = self.globals = self.chain = 0

    def _refuse(self, why: str) -> ArchiveRefused:
        return ArchiveRefused(f"{self.what}: {why}")

    def _read(self, n: int) -> bytes:
        out = b""
        while len(out) < n and (chunk := self.stream.read(min(_SKIP, n - len(out)))):
            out += chunk
        return out

    def _skip(self, n: int) -> None:
        while n > 0:
            chunk = self.stream.read(min(_SKIP, n))
            if not chunk:
                return
            n -= len(chunk)

    def _count(self, size: int) -> None:
        self.total += size
        if self.total > self.limits.max_bytes:
            raise TooLarge(
                f"{self.what} unpacks to more than the limit of {self.limits.max_bytes} bytes"
            )

    def run(self) -> None:
        first = True
        while True:
            try:
                info = tarfile.TarInfo.frombuf(self._read(_BLOCK), "utf-8", "surrogateescape")
            except tarfile.HeaderError as exc:
                if self.chain:
                    raise self._refuse(
                        "a long-name or pax header is not followed by an entry"
                    ) from None
                if first:
                    raise InputError(f"{self.what} is not a readable tar file: {exc}") from None
                return  # the end (tarfile stops at the same header)
            first = False
            if info.size < 0:
                raise self._refuse(f"entry {info.name[:80]!r} has a negative size")
            if info.type in _EXTENDED or info.type in _PAX:
                self._extended(info)
                continue
            if info.type == tarfile.GNUTYPE_SPARSE:
                raise self._refuse(f"entry {info.name[:80]!r} is a sparse file")
            self.chain = 0
            self.members += 1
            if self.members > self.limits.max_members:
                raise TooLarge(f"{self.what} has more than {self.limits.max_members} entries")
            if info.isreg() or info.type not in tarfile.SUPPORTED_TYPES:
                self._count(info.size)
                self._skip(-(-info.size // _BLOCK) * _BLOCK)

    def _extended(self, info: tarfile.TarInfo) -> None:
        """A long name/link or pax header: its data bounded, then read (it is small)."""
        lim = self.limits
        kind = "pax" if info.type in _PAX else "GNU long-name"
        if info.size > lim.max_header_bytes:
            raise self._refuse(
                f"a {kind} header of {info.size} bytes is over the limit of "
                f"{_kib(lim.max_header_bytes)}"
            )
        self.chain += 1
        if self.chain > lim.max_chain:
            raise self._refuse(f"more than {lim.max_chain} long-name or pax headers in a row")
        if info.type == tarfile.XGLTYPE:
            self.globals += info.size
            if self.globals > lim.max_global_bytes:
                raise self._refuse(
                    f"pax global headers over the limit of {_kib(lim.max_global_bytes)} together"
                )
        self._count(info.size)
        body = self._read(-(-info.size // _BLOCK) * _BLOCK)[: info.size]
        if info.type in _PAX:
            self._pax_keys(body)

    def _pax_keys(self, body: bytes) -> None:
        """Refuse the records that change where ``tarfile`` reads the next header."""
        pos = 0
        while m := _PAX_RECORD.match(body, pos):
            digits, key = m.groups()
            if len(digits) > 20 or int(digits) == 0:
                raise self._refuse("a pax record has an invalid length")
            if key == b"size" or key.startswith(b"GNU.sparse."):
                raise self._refuse(f"a pax {key.decode('ascii', 'replace')!r} record is refused")
            pos += int(digits)


# -- zip ----------------------------------------------------------------------------------

_EOCD = struct.Struct("<4s4H2LH")
_EOCD64_LOCATOR = struct.Struct("<4sLQL")
_EOCD64 = struct.Struct("<4sQ2H2L4Q")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")
_UTF8_FLAG = 1 << 11


def check_zip(data: IO[bytes], limits: ArchiveLimits, what: str = "archive") -> None:
    """Read the zip archive ``data``'s central directory as ``zipfile`` will, record by
    record, within ``limits``; rewind it. :class:`ArchiveRefused` past a limit, or
    :class:`InputError` for one that is no zip."""
    start = data.tell()
    try:
        located = _end_record(data)
        if located is None:
            raise InputError(f"{what} is not a readable zip file: no end of central directory")
        where, size, count = located
        if count > limits.max_members:
            raise TooLarge(f"{what} has more than {limits.max_members} entries")
        _central(data, where, size, limits, what)
    finally:
        data.seek(start)


def _end_record(fp: IO[bytes]) -> tuple[int, int, int] | None:
    """(offset, size, entries) of the central directory, found as ``zipfile._EndRecData``
    finds it (the end record last, or the last one within the comment's 64 KiB)."""
    fp.seek(0, 2)
    filesize = fp.tell()
    if filesize < _EOCD.size:
        return None
    fp.seek(filesize - _EOCD.size)
    tail = fp.read()
    if tail[:4] == b"PK\x05\x06" and tail[-2:] == b"\x00\x00":
        location = filesize - _EOCD.size
        rec = tail
    else:
        low = max(filesize - (1 << 16) - _EOCD.size, 0)
        fp.seek(low)
        tail = fp.read()
        found = tail.rfind(b"PK\x05\x06")
        if found < 0 or len(tail) - found < _EOCD.size:
            return None
        location = low + found
        rec = tail[found : found + _EOCD.size]
    fields = _EOCD.unpack(rec)
    size, count = fields[5], fields[4]
    z64 = _zip64(fp, location)
    if z64 is not None:
        size, count = z64
        return location - size - _EOCD64.size - _EOCD64_LOCATOR.size, size, count
    return location - size, size, count


def _zip64(fp: IO[bytes], location: int) -> tuple[int, int] | None:
    """The zip64 end record's (size, entries) just before the end record, if there is one."""
    if location < _EOCD64_LOCATOR.size + _EOCD64.size:
        return None
    fp.seek(location - _EOCD64_LOCATOR.size)
    if _EOCD64_LOCATOR.unpack(fp.read(_EOCD64_LOCATOR.size))[0] != b"PK\x06\x07":
        return None
    fp.seek(location - _EOCD64_LOCATOR.size - _EOCD64.size)
    rec = _EOCD64.unpack(fp.read(_EOCD64.size))
    if rec[0] != b"PK\x06\x06":
        return None
    return rec[8], rec[7]


def _central(fp: IO[bytes], where: int, size: int, limits: ArchiveLimits, what: str) -> None:
    if where < 0:
        raise InputError(f"{what} is not a readable zip file: bad central directory offset")
    fp.seek(where)
    seen = records = total = 0
    while seen < size:
        head = fp.read(_CENTRAL.size)
        if len(head) != _CENTRAL.size or head[:4] != b"PK\x01\x02":
            raise InputError(f"{what} is not a readable zip file: bad central directory")
        rec = _CENTRAL.unpack(head)
        flags, file_size, n_name, n_extra, n_comment = rec[5], rec[11], rec[12], rec[13], rec[14]
        records += 1
        if records > limits.max_members:
            raise TooLarge(f"{what} has more than {limits.max_members} entries")
        if n_name > _MAX_NAME:
            raise ArchiveRefused(f"{what}: an entry's name is over {_MAX_NAME} bytes")
        name = fp.read(n_name)
        extra = fp.read(n_extra)
        fp.seek(n_comment, 1)
        if flags & _UTF8_FLAG:
            try:
                name.decode("utf-8")
            except UnicodeDecodeError:
                raise ArchiveRefused(f"{what}: entry {name[:80]!r} is not valid UTF-8") from None
        if file_size == 0xFFFFFFFF:
            file_size = _zip64_size(extra, name, what)
        total += file_size
        if total > limits.max_bytes:
            raise TooLarge(f"{what} unpacks to more than the limit of {limits.max_bytes} bytes")
        seen += _CENTRAL.size + n_name + n_extra + n_comment


def _zip64_size(extra: bytes, name: bytes, what: str) -> int:
    """The uncompressed size in a record's zip64 extra field (its first field)."""
    pos = 0
    while pos + 4 <= len(extra):
        tag, n = struct.unpack_from("<HH", extra, pos)
        if tag == 1 and n >= 8:
            size: int = struct.unpack_from("<Q", extra, pos + 4)[0]
            return size
        pos += 4 + n
    raise InputError(f"{what} is not a readable zip file: entry {name[:80]!r} has no zip64 size")
