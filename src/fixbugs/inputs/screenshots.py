"""Screenshots: kept as artifacts, read only if an OCR engine is present.

An image is recognised by its magic bytes, not its name. Its text is
extracted with ``tesseract`` when that is on PATH; otherwise the
screenshot is still kept and the note says OCR was skipped, so nobody
mistakes "no text" for "nothing in the picture".
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fixbugs.errors import InputError
from fixbugs.inputs.textfile import require_file
from fixbugs.sandbox.hosttools import run_tool

__all__ = ["ImageKind", "Screenshot", "image_kind", "load_screenshot"]

ImageKind = Literal["png", "jpeg", "gif", "webp"]
OCR_TIMEOUT_S = 60


@dataclass(frozen=True)
class Screenshot:
    source: Path
    artifact: Path
    kind: ImageKind
    text: str | None
    note: str | None


def image_kind(head: bytes) -> ImageKind | None:
    """The image format from a file's first 12 bytes, or ``None``."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    return None


def load_screenshot(path: Path, artifacts_dir: Path | None = None, *, index: int = 0) -> Screenshot:
    """Check the image, copy it into ``artifacts_dir`` (if given), OCR it if possible."""
    p = require_file(path, "screenshot")
    with p.open("rb") as f:
        kind = image_kind(f.read(12))
    if kind is None:
        raise InputError(f"screenshot {p} is not a PNG, JPEG, GIF or WebP image")
    artifact = p
    if artifacts_dir is not None:
        target_dir = Path(artifacts_dir) / "screenshots"
        target_dir.mkdir(parents=True, exist_ok=True)
        artifact = target_dir / f"{index:02d}-{p.name}"
        shutil.copyfile(p, artifact)
    text, note = _ocr(p)
    return Screenshot(source=p, artifact=artifact, kind=kind, text=text, note=note)


def _ocr(p: Path) -> tuple[str | None, str | None]:
    exe = shutil.which("tesseract")
    if exe is None:
        return None, f"screenshot {p.name}: text not extracted (tesseract is not installed)"
    done = run_tool([exe, str(p), "stdout"], timeout_s=OCR_TIMEOUT_S)
    if done.timed_out:
        return None, f"screenshot {p.name}: OCR gave up after {OCR_TIMEOUT_S} s"
    if done.returncode != 0:
        reason = (done.stderr_text.strip().splitlines() or ["failed"])[-1]
        return None, f"screenshot {p.name}: OCR failed ({reason})"
    return done.stdout_text.strip(), None
