"""Archives are bounded before ``tarfile`` or ``zipfile`` allocates (issue 41, item 2).

Seen: a 1 MB ``.tar.gz`` whose GNU long-name header (``././@LongLink``) is
1 GiB of zeros took the server from 124 MB to 1,170 MB RSS before its 400,
since ``tarfile`` reads a long name or pax record whole before any check. The
bombs are built here as concatenated gzip members (1 MiB of zeros each, about
1 KB compressed), so the test itself never holds more than a MiB; the upload
is posted to the app in this process, whose peak RSS (``VmHWM``, reset through
``/proc/self/clear_refs``) must stay under twice its figure before the post.
"""

from __future__ import annotations

import gzip
import io
import struct
import tarfile
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from svckit import in_process, memory_service, tar_gz, whole_report

from fixbugs.eval.archive import extract_tree
from fixbugs.inputs.archives import ArchiveLimits, ArchiveRefused, TooLarge, check_tar, check_zip
from fixbugs.run.progress import EventSink
from fixbugs.run.report_schema import ReportModel
from fixbugs.service import BugSpec, create_app

KEY = "archive-limits-key"
GIB = 1 << 30
_ZEROS_MIB = gzip.compress(bytes(1 << 20), mtime=0)  # one gzip member: 1 MiB of zeros


async def never_run(spec: BugSpec, sink: EventSink) -> ReportModel:
    return whole_report(spec.title)


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    from fixbugs.service import ApiKeys

    service = memory_service(tmp_path / "ws", never_run)
    app = create_app(service, keys=ApiKeys({KEY: "acme"}), run_workers=False)
    async with in_process(app, service, workers=False) as c:
        yield c


def header(name: str, kind: bytes, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.type, info.size = kind, size
    return info.tobuf(format=tarfile.GNU_FORMAT)


def bomb(path: Path, kind: bytes, size: int = GIB) -> Path:
    """A .tar.gz: one ``kind`` header claiming ``size`` bytes of zeros, then a small file.

    Written as gzip members (the header's, ``size`` MiB of zeros, the rest's):
    a stream reads them as one, and none is ever more than a MiB here.
    """
    name = "././@LongLink" if kind in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK) else "x"
    rest = header("repo/a.py", tarfile.REGTYPE, 2) + b"x\n".ljust(512, b"\0") + bytes(1024)
    with path.open("wb") as f:
        f.write(gzip.compress(header(name, kind, size), mtime=0))
        for _ in range(size >> 20):
            f.write(_ZEROS_MIB)
        f.write(gzip.compress(rest, mtime=0))
    return path


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def _reset_peak() -> int:
    """Start the peak RSS again from now; the RSS now, in KiB."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status_kib("VmRSS")


async def post_measured(
    client: httpx.AsyncClient, archive: Path, name: str
) -> tuple[httpx.Response, int, int]:
    """Post ``archive`` as the repository; (response, RSS before, peak RSS during) in KiB."""
    with archive.open("rb") as repo:
        files = {"report": ("r.md", b"# add is wrong\n"), "repo": (name, repo)}
        idle = _reset_peak()
        r = await client.post("/v1/bugs/upload", headers={"X-API-Key": KEY}, files=files)
        return r, idle, _status_kib("VmHWM")


def one_line_400(r: httpx.Response, *words: str) -> str:
    assert r.status_code == 400, r.text[:300]
    detail: str = r.json()["detail"]
    assert "\n" not in detail and "Traceback" not in detail and len(detail) < 300, detail
    assert all(w in detail for w in words), detail
    return detail


@pytest.mark.parametrize(
    "kind",
    [tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE],
    ids=["gnu-long-name", "gnu-long-link", "pax-record", "pax-global"],
)
async def test_a_1_gib_extended_header_is_refused_within_twice_the_idle_memory(
    client: httpx.AsyncClient, tmp_path: Path, kind: bytes
) -> None:
    archive = bomb(tmp_path / "bomb.tar.gz", kind)
    assert archive.stat().st_size < 2 << 20  # the test holds a small file, not the GiB
    r, idle_kib, peak_kib = await post_measured(client, archive, "repo.tar.gz")
    assert peak_kib < 2 * idle_kib, f"peak {peak_kib} KiB, idle {idle_kib} KiB"
    one_line_400(r, "header of 1073741824 bytes", "64 KiB")


async def test_an_entry_1500_folders_deep_is_a_one_line_400(client: httpx.AsyncClient) -> None:
    deep = "repo/" + "d/" * 1500 + "f.py"
    r = await client.post(
        "/v1/bugs/upload",
        headers={"X-API-Key": KEY},
        files={"report": ("r.md", b"# x\n"), "repo": ("r.tar.gz", tar_gz({deep: b"x = 1\n"}))},
    )
    one_line_400(r, "levels deep (limit 64)")


@pytest.mark.parametrize("fmt", ["tar", "zip"])
async def test_an_entry_named_in_invalid_utf8_is_a_one_line_400(
    client: httpx.AsyncClient, fmt: str
) -> None:
    if fmt == "tar":  # tarfile writes the raw bytes of a surrogate-escaped name
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.GNU_FORMAT) as tar:
            for name in ("repo/ok.py", "repo/bad\udcff.py"):
                info = tarfile.TarInfo(name)
                info.size = 2
                tar.addfile(info, io.BytesIO(b"x\n"))
        archive, name = buf.getvalue(), "r.tar.gz"
    else:  # a name flagged UTF-8 whose bytes are not
        archive, name = utf8_flagged_zip(b"repo/bad\xff.py"), "r.zip"
    r = await client.post(
        "/v1/bugs/upload",
        headers={"X-API-Key": KEY},
        files={"report": ("r.md", b"# x\n"), "repo": (name, archive)},
    )
    one_line_400(r, "not valid UTF-8")


def utf8_flagged_zip(raw_name: bytes) -> bytes:
    """A zip of two files, the second named ``raw_name`` and flagged as UTF-8 in its record."""
    stand_in = b"x" * len(raw_name)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("repo/ok.py", b"x\n")
        zf.writestr(stand_in.decode(), b"y\n")
    data = buf.getvalue().replace(stand_in, raw_name)  # the local header's and the record's
    record = bytearray(data)
    cd = record.rfind(b"PK\x01\x02")
    (flags,) = struct.unpack_from("<H", record, cd + 8)
    struct.pack_into("<H", record, cd + 8, flags | 0x800)
    return bytes(record)


def test_a_zip_past_the_entry_count_is_refused_before_zipfile_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(60):
            zf.writestr(f"repo/f{i}.py", b"")

    declaring = _declaring(10 << 20)

    def no_zipfile(*_: object, **__: object) -> None:
        raise AssertionError("zipfile was opened before the limits were checked")

    monkeypatch.setattr(zipfile, "ZipFile", no_zipfile)
    with pytest.raises(TooLarge, match="more than 50 entries"):
        check_zip(buf, ArchiveLimits(max_members=50))
    with pytest.raises(TooLarge, match="unpacks to more than"):
        check_zip(declaring, ArchiveLimits(max_bytes=1 << 20))


def _declaring(size: int) -> io.BytesIO:
    """A zip of one stored member whose central record declares ``size`` bytes."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("repo/big.py", b"x")
    data = bytearray(buf.getvalue())
    cd = data.rfind(b"PK\x01\x02")
    struct.pack_into("<L", data, cd + 24, size)
    return io.BytesIO(bytes(data))


def test_a_tar_past_the_entry_count_or_a_long_header_chain_is_refused() -> None:
    many = io.BytesIO(tar_gz({f"repo/f{i}.py": b"" for i in range(60)}))
    with pytest.raises(TooLarge, match="more than 50 entries"):
        check_tar(many, ArchiveLimits(max_members=50))
    chain = b"".join(
        header("././@LongLink", tarfile.GNUTYPE_LONGNAME, 3) + b"ab\0".ljust(512, b"\0")
        for _ in range(5)
    )
    chained = io.BytesIO(chain + header("repo/a.py", tarfile.REGTYPE, 0) + bytes(1024))
    with pytest.raises(ArchiveRefused, match="more than 4 long-name or pax headers in a row"):
        check_tar(chained, ArchiveLimits())
    assert chained.tell() == 0  # rewound, whatever the outcome


def test_a_case_tarball_with_a_long_name_bomb_is_refused_by_the_eval(tmp_path: Path) -> None:
    archive = bomb(tmp_path / "repo.tar.gz", tarfile.GNUTYPE_LONGNAME, size=8 << 20)
    with pytest.raises(ArchiveRefused, match="GNU long-name header of 8388608 bytes"):
        extract_tree(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_an_honest_archive_still_unpacks_in_every_compression(tmp_path: Path) -> None:
    long = "repo/" + "n" * 150 + "/m.py"  # a long name: a GNU or pax header of its own
    for mode, fmt in (("w:gz", tarfile.GNU_FORMAT), ("w:bz2", tarfile.PAX_FORMAT), ("w:xz", 0)):
        buf = io.BytesIO()
        kw = {"format": fmt} if fmt else {}
        with tarfile.open(fileobj=buf, mode=mode, **kw) as tar:  # type: ignore[call-overload]
            for name, data in (("repo/a.py", b"a = 1\n"), (long, b"m = 2\n")):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        buf.seek(0)
        opened = check_tar(buf, ArchiveLimits())
        assert opened == "r:" + mode[2:]
        with tarfile.open(fileobj=buf, mode=opened) as tar:
            assert sorted(m.name for m in tar) == sorted(["repo/a.py", long])
