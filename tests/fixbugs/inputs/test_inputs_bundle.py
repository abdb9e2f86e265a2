"""Screenshots and the whole bundle: errors for missing files, notes for unusable ones."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import pytest

import fixbugs.inputs.ocr as ocr
from fixbugs.errors import InputError
from fixbugs.inputs import image_kind, load_inputs, load_screenshot


def png(width: int = 4, height: int = 2) -> bytes:
    """A real grey PNG of ``width`` × ``height`` white pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xff" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = png()


@pytest.fixture
def case(tmp_path: Path) -> Path:
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "app.py").write_text("print('hi')\n")
    (tmp_path / "report.md").write_text("# It crashes\n\nSee logs.\n")
    (tmp_path / "app.log").write_text("ERROR boom\n")
    (tmp_path / "empty.log").write_text("")
    (tmp_path / "shot.png").write_bytes(PNG)
    (tmp_path / "traces.json").write_text(json.dumps({"resourceSpans": []}))
    return tmp_path


def test_image_kinds_by_magic_bytes() -> None:
    assert image_kind(PNG) == "png"
    assert image_kind(b"\xff\xd8\xff\xe0") == "jpeg"
    assert image_kind(b"GIF89a....") == "gif"
    assert image_kind(b"RIFF\x00\x00\x00\x00WEBP") == "webp"
    assert image_kind(b"%PDF-1.7") is None


def test_screenshot_is_kept_as_an_artifact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "unavailable", lambda: "tesseract is not installed")
    src = tmp_path / "s.png"
    src.write_bytes(PNG)
    shot = load_screenshot(src, tmp_path / "artifacts", index=3)
    assert shot.artifact == tmp_path / "artifacts" / "screenshots" / "03-s.png"
    assert shot.artifact.read_bytes() == PNG and shot.kind == "png"
    assert shot.text is None and shot.note is not None and "text not read" in shot.note


def test_not_an_image(tmp_path: Path) -> None:
    p = tmp_path / "shot.png"
    p.write_text("not an image")
    with pytest.raises(InputError, match="is not a PNG, JPEG, GIF or WebP image"):
        load_screenshot(p)


def test_bundle_loads_and_notes_weak_evidence(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ocr, "unavailable", lambda: "tesseract is not installed")
    inputs = load_inputs(
        case / "report.md",
        case / "repo",
        logs=[case / "app.log", case / "empty.log"],
        traces=[case / "traces.json"],
        test="  pytest -x  ",
        screenshots=[case / "shot.png"],
        artifacts_dir=case / "out",
    )
    assert inputs.report.title == "It crashes"
    assert inputs.repo.files() == ("app.py",)
    assert inputs.logs == (case / "app.log",)
    assert inputs.test_command == "pytest -x"
    assert len(inputs.screenshots) == 1
    notes = " | ".join(inputs.notes)
    assert "empty.log is empty; skipped" in notes
    assert "holds no spans" in notes
    assert "screenshot shot.png: text not read" in notes


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"traces": ["cut.json"]}, "cut.json is not valid JSON"),
        ({"repo": "emptyrepo"}, "has no text source files"),
        ({"logs": ["missing.log"]}, "missing.log does not exist"),
    ],
)
def test_bundle_malformed_inputs_are_one_line_errors(
    case: Path, kwargs: dict[str, object], message: str
) -> None:
    (case / "binary.log").write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 64)
    (case / "cut.json").write_text('{"resourceSpans": [{"resource": ')
    (case / "emptyrepo").mkdir()
    args: dict[str, object] = {"report": case / "report.md", "repo": case / "repo"}
    for key, value in kwargs.items():
        args[key] = [case / v for v in value] if isinstance(value, list) else case / str(value)
    with pytest.raises(InputError, match=message) as info:
        load_inputs(**args)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


def test_an_unusable_log_or_screenshot_is_one_note_and_the_run_goes_on(case: Path) -> None:
    """The user named them and they exist, but they cannot be used: left out, one line each."""
    (case / "binary.log").write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 64)
    (case / "fake.png").write_text("not an image")
    inputs = load_inputs(
        case / "report.md",
        case / "repo",
        logs=[case / "binary.log", case / "app.log"],
        screenshots=[case / "fake.png"],
    )
    assert inputs.logs == (case / "app.log",)
    assert inputs.screenshots == ()
    notes = inputs.notes
    assert any("binary.log is binary" in n and n.endswith("left out") for n in notes)
    assert any("fake.png is not a PNG, JPEG, GIF or WebP image; left out" in n for n in notes)
    assert all("\n" not in n for n in notes)


def test_a_missing_screenshot_is_an_error(case: Path) -> None:
    with pytest.raises(InputError, match=r"screenshot .*nothere\.png does not exist"):
        load_inputs(case / "report.md", case / "repo", screenshots=[case / "nothere.png"])
