"""Logs as users have them: a folder of logs, a zip of logs, and a zip bomb among them."""

from __future__ import annotations

import gzip
import io
import os
import struct
import zipfile
from pathlib import Path

import pytest

from fixbugs.inputs import iter_log_records, load_inputs
from fixbugs.inputs.logsources import LOG_ARCHIVE_LIMITS, folder_logs
from fixbugs.stages.analysis import log_chunks, log_signal_records


@pytest.fixture
def case(tmp_path: Path) -> Path:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "app.py").write_text("x = 1\n")
    (tmp_path / "report.md").write_text("# It crashes\n\nSee the logs.\n")
    return tmp_path


def make_folder(root: Path) -> Path:
    logs = root / "logs"
    (logs / "worker" / "old").mkdir(parents=True)
    (logs / "web.log").write_text("INFO up\nERROR web failed\n")
    (logs / "worker" / "w.log").write_text("ERROR worker failed\n")
    with gzip.open(logs / "worker" / "old" / "w.log.1.gz", "wt") as f:
        f.write("ERROR rotated failure\n")
    (logs / "core").write_bytes(bytes(range(256)) * 64)
    (logs / "passwd.log").symlink_to("/etc/passwd")
    os.mkfifo(logs / "pipe.log")
    return logs


def make_zip(path: Path) -> Path:
    inner = io.BytesIO()
    with gzip.GzipFile(fileobj=inner, mode="wb") as g:
        g.write(b"ERROR from the rotated member\n")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("ci/app.log", "INFO start\nERROR app crashed\n")
        z.writestr("ci/app.log.1.gz", inner.getvalue())
        z.writestr("ci/", "")
        z.writestr("ci/core.bin", bytes(range(256)) * 64)
        link = zipfile.ZipInfo("ci/secret.log")
        link.external_attr = (0o120777 << 16) | 0
        z.writestr(link, "/etc/passwd")
    return path


def declared_bomb(path: Path, members: int = 2) -> Path:
    """A small zip whose central directory declares ~4 GB per member."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(members):
            z.writestr(f"{i}.log", "ERROR x\n")
    data = bytearray(path.read_bytes())
    at = 0
    while (at := data.find(b"PK\x01\x02", at)) >= 0:
        struct.pack_into("<L", data, at + 24, 0xFFFFFFF0)  # uncompressed size
        at += 4
    path.write_bytes(bytes(data))
    return path


def test_a_folder_is_walked_regular_files_only(tmp_path: Path) -> None:
    logs = make_folder(tmp_path)
    files, notes = folder_logs(logs)
    assert [f.relative_to(logs).as_posix() for f in files] == [
        "core",
        "web.log",
        "worker/w.log",
        "worker/old/w.log.1.gz",
    ]
    assert notes == [f"log folder {logs}: left out 1 link(s) not followed, 1 special file(s) "
                     "or unreadable folder(s)"]  # fmt: skip


def test_a_log_folder_and_a_zip_are_read_as_their_logs(case: Path) -> None:
    logs = make_folder(case)
    archive = make_zip(case / "ci-logs.zip")
    inputs = load_inputs(case / "report.md", case / "repo", logs=[logs, archive])
    assert [p.name for p in inputs.logs] == ["web.log", "w.log", "w.log.1.gz", "ci-logs.zip"]
    notes = "\n".join(inputs.notes)
    assert "core is binary, not a text log" in notes
    assert "left out 1 link(s) not followed" in notes
    assert f"log archive {archive}: 2 member(s) not read" in notes
    records = list(iter_log_records(archive))
    assert [(r.source, r.line_no, r.message) for r in records] == [
        ("ci-logs.zip:ci/app.log", 1, "INFO start"),
        ("ci-logs.zip:ci/app.log", 2, "ERROR app crashed"),
        ("ci-logs.zip:ci/app.log.1.gz", 1, "ERROR from the rotated member"),
    ]
    assert [r.message for r in log_signal_records(archive)][-1] == "ERROR from the rotated member"
    chunks = list(log_chunks(archive, 100))
    assert [c.source for c in chunks] == ["ci-logs.zip:ci/app.log", "ci-logs.zip:ci/app.log.1.gz"]
    # a gzip log's chunks are its text, not its compressed bytes
    (gz,) = log_chunks(logs / "worker" / "old" / "w.log.1.gz", 100)
    assert gz.text == "ERROR rotated failure\n"


@pytest.mark.parametrize("members", [2, LOG_ARCHIVE_LIMITS.max_members + 1])
def test_a_zip_bomb_is_one_note_and_the_run_goes_on(case: Path, members: int) -> None:
    if members > 2:
        bomb = case / "many.zip"
        with zipfile.ZipFile(bomb, "w") as z:
            for i in range(members):
                z.writestr(f"{i}.log", "")
        why = f"has more than {LOG_ARCHIVE_LIMITS.max_members} entries"
    else:
        bomb = declared_bomb(case / "bomb.zip")
        why = f"unpacks to more than the limit of {LOG_ARCHIVE_LIMITS.max_bytes} bytes"
    (case / "app.log").write_text("ERROR boom\n")
    inputs = load_inputs(case / "report.md", case / "repo", logs=[bomb, case / "app.log"])
    assert inputs.logs == (case / "app.log",)
    (note,) = [n for n in inputs.notes if bomb.name in n]
    assert note == f"log archive {bomb} {why}; left out"


def test_a_member_that_lies_about_its_size_is_not_read(case: Path) -> None:
    """Declared 8 bytes, holding a megabyte: read no further than declared, then dropped."""
    tmp_path = case
    path = tmp_path / "liar.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.log", "ERROR x\n" + "y" * (1 << 20))
    data = bytearray(path.read_bytes())
    for magic, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.find(magic)
        struct.pack_into("<L", data, at + offset, 8)
    path.write_bytes(bytes(data))
    inputs = load_inputs(case / "report.md", case / "repo", logs=[path])
    assert inputs.logs == ()
    assert inputs.notes == (
        f"log archive {path} holds no text log (1 member(s) not read (binary, a link, "
        "encrypted or broken)); left out",
    )
