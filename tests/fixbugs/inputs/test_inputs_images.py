"""Images as users have them: checked by their header, linked from the report, read by OCR.

The OCR tests render a real screenshot of a Python traceback (Pillow's
scalable default font), hand it to a run as ``--screenshot`` and find the
traceback's repository frame (file and line) in the analysis' evidence,
read by ``tesseract`` inside the sandbox, never on the host. They need what
the sandbox needs (root, bubblewrap, setpriv) and Debian's ``tesseract-ocr``
(``scripts/system-deps`` installs it), and skip naming what is missing.
Every other test runs anywhere: OCR is not asked for, or is said unavailable.
"""

from __future__ import annotations

import shutil
import socket
import struct
import zlib
from pathlib import Path

import pytest

import fixbugs.inputs.ocr as ocr
from fixbugs.inputs import load_inputs
from fixbugs.inputs.images import MAX_IMAGE_BYTES, ImageRefused, check_image
from fixbugs.inputs.ocr import OCR_PATH, normalize_ocr
from fixbugs.inputs.reportimages import linked_images
from fixbugs.run.agent import run_bug
from fixbugs.run.context import AgentOptions
from fixbugs.sandbox import Sandbox, hosttools
from fixbugs.sandbox.testing import PlainWorkspace

TRACEBACK = """Traceback (most recent call last):
  File "/home/ana/work/shop/app.py", line 5, in <module>
    print(total([]))
  File "/home/ana/work/shop/shop/cart.py", line 12, in total
    return sum(prices) / len(prices)
ZeroDivisionError: division by zero"""

CART = '''"""A cart."""


def total(prices):
    """The mean price of the cart."""
    if prices is None:
        return 0
    count = 0
    for _ in prices:
        count += 1
    # the mean
    return sum(prices) / len(prices)
'''


def png(width: int = 4, height: int = 2, *, idat: bytes | None = None) -> bytes:
    """A PNG of ``width`` × ``height`` white grey pixels (or the ``idat`` given)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    if idat is None:
        idat = zlib.compress(b"".join(b"\x00" + b"\xff" * width for _ in range(height)))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


def render(text: str, path: Path, size: int = 20) -> Path:
    """``text`` drawn black on white, as a terminal screenshot is."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=size)
    lines = text.splitlines()
    width = max(int(font.getlength(line)) for line in lines) + 40
    img = Image.new("RGB", (width, (size + 8) * len(lines) + 40), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((20, 20 + i * (size + 8)), line, fill="black", font=font)
    img.save(path)
    return path


@pytest.fixture
def case(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "shop").mkdir(parents=True)
    (repo / "shop" / "__init__.py").write_text("")
    (repo / "shop" / "cart.py").write_text(CART)
    (repo / "app.py").write_text("from shop.cart import total\n\n\n\nprint(total([]))\n")
    (tmp_path / "report.md").write_text("# total() crashes\n\nThe app crashes on an empty cart.\n")
    return tmp_path


@pytest.fixture
def no_ocr(monkeypatch: pytest.MonkeyPatch) -> None:
    """OCR said unavailable: the tests of what is read run on any machine, quickly."""
    monkeypatch.setattr(ocr, "unavailable", lambda: "not in this test")


# -- headers --------------------------------------------------------------------------


def test_the_pixel_size_is_read_from_each_format_header() -> None:
    assert check_image(png(7, 3), "x").width == 7
    jpeg = b"\xff\xd8" + b"\xff\xe0\x00\x04ab" + b"\xff\xc0\x00\x0b\x08\x00\x30\x00\x40\x01\x01"
    shape = check_image(jpeg, "x")
    assert (shape.kind, shape.width, shape.height) == ("jpeg", 64, 48)
    assert check_image(b"GIF89a" + struct.pack("<HH", 320, 200) + b"\x00" * 8, "x").height == 200
    vp8l = b"RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2f" + struct.pack("<I", 99 | 49 << 14)
    assert (check_image(vp8l, "x").width, check_image(vp8l, "x").height) == (100, 50)
    vp8x = b"RIFF\x00\x00\x00\x00WEBPVP8X" + b"\x00" * 8 + (639).to_bytes(3, "little")
    assert check_image(vp8x + (479).to_bytes(3, "little"), "x").height == 480


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"hello, not an image", "is not a PNG, JPEG, GIF or WebP image"),
        (b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "is not a readable PNG image"),
        (png(100_000, 100_000, idat=b""), "declares 100000 × 100000 pixels, over the limit"),
        (b"GIF89a\xff\xff\xff\xff" + b"\x00" * 8, "declares 65535 × 65535 pixels"),
        (b"\xff\xd8\xff\xda\x00\x02", "is not a readable JPEG image"),
    ],
)
def test_a_bad_image_is_refused_in_one_line(data: bytes, message: str) -> None:
    with pytest.raises(ImageRefused, match=message) as info:
        check_image(data, "screenshot s.png")
    assert "\n" not in str(info.value)


def test_bad_screenshots_are_one_note_each_and_the_run_goes_on(case: Path, no_ocr: None) -> None:
    (case / "fake.png").write_text("a text file named .png")
    (case / "bomb.png").write_bytes(png(100_000, 100_000, idat=zlib.compress(b"\x00" * 1000)))
    huge = case / "huge.png"
    with huge.open("wb") as f:  # sparse: nothing is written past the header
        f.write(png())
        f.truncate(MAX_IMAGE_BYTES + 1)
    (case / "good.png").write_bytes(png())
    names = ["fake.png", "bomb.png", "huge.png", "good.png"]
    inputs = load_inputs(case / "report.md", case / "repo", screenshots=[case / n for n in names])
    assert [s.source.name for s in inputs.screenshots] == ["good.png"]
    notes = "\n".join(inputs.notes)
    assert "fake.png is not a PNG, JPEG, GIF or WebP image; left out" in notes
    assert "bomb.png declares 100000 × 100000 pixels" in notes
    assert f"huge.png: {MAX_IMAGE_BYTES + 1} bytes, over the {MAX_IMAGE_BYTES} cap" in notes
    assert "good.png: text not read (not in this test)" in notes


# -- images the report links ------------------------------------------------------------


def test_linked_images_only_below_the_reports_folder(tmp_path: Path) -> None:
    text = (
        "![a](shots/a.png) ![b](../b.png) <img alt=x src='/etc/passwd'> ![c](https://x.io/c.png)"
        ' ![d](shots/a.png "again") ![e](sub/../../e.png) <IMG SRC="data:image/png;base64,AAA">'
    )
    found = linked_images(text, tmp_path / "issue" / "report.md")
    assert found.paths == (tmp_path / "issue" / "shots" / "a.png",)
    assert found.folder == tmp_path / "issue"
    assert found.notes == (
        "2 image(s) linked in the report by URL, not fetched (no network at run time): "
        "https://x.io/c.png, data:image/png;base64,AAA",
        "3 image(s) linked in the report outside its folder, not read: "
        "../b.png, sub/../../e.png, /etc/passwd",
    )


def test_a_link_on_the_way_is_not_followed(
    tmp_path: Path, no_ocr: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report names paths in its folder that are links out of it: none is read."""

    def no_network(*args: object) -> None:
        raise AssertionError("a URL in the report was fetched")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "s.png").write_bytes(png())
    issue = tmp_path / "issue"
    (issue / "shots").mkdir(parents=True)
    (issue / "shots" / "in.png").write_bytes(png())
    (issue / "link.png").symlink_to(secret / "s.png")
    (issue / "dir").symlink_to(secret)
    (issue / "report.md").write_text(
        "# Crash\n\n![in](shots/in.png) ![l](link.png) ![d](dir/s.png)"
        " ![u](https://example.com/shot.png)\n"
    )
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "app.py").write_text("x = 1\n")
    inputs = load_inputs(issue / "report.md", tmp_path / "repo")
    assert [(s.source, s.origin) for s in inputs.screenshots] == [
        (issue / "shots" / "in.png", "report")
    ]
    notes = "\n".join(inputs.notes)
    assert "image link.png linked in the report not read: link.png: refused" in notes
    assert "image s.png linked in the report not read" in notes
    assert "by URL, not fetched (no network at run time): https://example.com/shot.png" in notes


# -- OCR ------------------------------------------------------------------------------


def test_ocr_confusions_around_a_frame_are_undone() -> None:
    read = 'File “/a/b.py’, line 12, in f\n  File "/a/c.py*, line 3\ndon’t'
    assert normalize_ocr(read) == (
        'File "/a/b.py", line 12, in f\n  File "/a/c.py", line 3\ndon\'t'
    )


def test_without_a_sandbox_ocr_is_skipped_never_run_on_the_host(
    case: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fixbugs.sandbox import Mechanisms

    weak = Mechanisms(root=False, namespaces=False, setpriv=True, prlimit=True)
    monkeypatch.setattr(ocr, "probe", lambda: weak)
    started: list[tuple[str, ...]] = []
    monkeypatch.setattr(hosttools.subprocess, "run", lambda argv, **kw: started.append(argv))
    (case / "shot.png").write_bytes(png())
    inputs = load_inputs(case / "report.md", case / "repo", screenshots=[case / "shot.png"])
    (shot,) = inputs.screenshots
    assert shot.text is None and not shot.ocr_sandboxed
    assert shot.note == (
        "screenshot shot.png: text not read (no sandbox here (needs root, bubblewrap and "
        "setpriv); OCR never runs outside one)"
    )
    assert started == []


def _ocr_ready() -> str | None:
    if shutil.which("tesseract", path=OCR_PATH) is None:
        return "needs tesseract-ocr (scripts/system-deps installs it)"
    return None


@pytest.mark.needs_namespaces
async def test_a_screenshot_of_a_traceback_puts_its_frame_in_the_evidence(
    case: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's "done when": the frame's file and line, read by OCR inside the sandbox."""
    if why := _ocr_ready():
        pytest.skip(why)
    shot = render(TRACEBACK, case / "shot.png")
    in_sandbox: list[list[str]] = []
    real_run = Sandbox.run

    async def recorded(self: Sandbox, cmd: list[str], **kw: object) -> object:
        in_sandbox.append(list(cmd))
        return await real_run(self, cmd, **kw)  # type: ignore[arg-type]

    on_host: list[tuple[str, ...]] = []
    real_tool = hosttools.run_tool

    def host_tool(argv: list[str], **kw: object) -> hosttools.ToolRun:
        on_host.append(tuple(argv))
        return real_tool(argv, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Sandbox, "run", recorded)
    monkeypatch.setattr(hosttools, "run_tool", host_tool)
    inputs = load_inputs(case / "report.md", case / "repo", screenshots=[shot])
    (read,) = inputs.screenshots
    assert read.ocr_sandboxed and read.text is not None, inputs.notes
    assert [argv[0] for argv in in_sandbox] == ["tesseract"]
    assert not any("tesseract" in " ".join(argv) for argv in on_host)
    assert "(its text, read by OCR)" in inputs.report.comments[-1]
    report = await run_bug(
        inputs,
        models=None,
        options=AgentOptions(use_model=False),
        workspace=PlainWorkspace.create,
        until="analysis",
    )
    frames = [
        (e["path"], e["line"]) for e in report.to_dict()["evidence"] if e["source"] == "traceback"
    ]
    assert ("shop/cart.py", 12) in frames
