"""Screenshots and the report's images: kept as artifacts, their text read by OCR.

A screenshot of a traceback is a traceback: an image named with
``--screenshot``, or linked from the report (:mod:`fixbugs.inputs.reportimages`),
is read bounded and never through a link (:func:`~fixbugs.sandbox.read_untrusted_sync`),
judged by its header (:func:`~fixbugs.inputs.images.check_image`), copied into
the run's artifacts, and its text read by OCR inside the sandbox
(:mod:`fixbugs.inputs.ocr`). :func:`with_image_texts` adds each text to the
report as one more comment, so the same parsers read it as a pasted
traceback. An image that is not one, or is too large, is left out with one
line (:class:`~fixbugs.inputs.images.ImageRefused`); where OCR cannot run,
the image is kept and a line says its text was not read, so nobody mistakes
"no text" for "nothing in the picture".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from fixbugs.inputs.bug_report import BugReport
from fixbugs.inputs.images import (
    MAX_IMAGE_BYTES,
    ImageKind,
    ImageRefused,
    check_image,
    image_kind,
)
from fixbugs.inputs.ocr import OcrImage, OcrText, ocr_images
from fixbugs.inputs.textfile import require_file
from fixbugs.sandbox.untrusted import UntrustedFile, read_untrusted_sync, write_output

__all__ = [
    "ImageKind",
    "ImageOrigin",
    "Screenshot",
    "image_kind",
    "load_screenshot",
    "load_screenshots",
    "read_image",
    "with_image_texts",
]

ImageOrigin = Literal["screenshot", "report"]


@dataclass(frozen=True)
class Screenshot:
    """One image of the run and what OCR read from it."""

    source: Path
    artifact: Path
    kind: ImageKind
    text: str | None
    note: str | None
    origin: ImageOrigin = "screenshot"
    ocr_sandboxed: bool = False  # the OCR engine ran, inside the sandbox

    @property
    def label(self) -> str:
        where = "screenshot" if self.origin == "screenshot" else "image in the report"
        return f"{where} {self.source.name}"


@dataclass(frozen=True, slots=True)
class _Checked:
    source: Path
    data: bytes
    kind: ImageKind
    origin: ImageOrigin


def read_image(path: Path, what: str, *, within: Path | None = None) -> tuple[bytes, ImageKind]:
    """The bytes and format of the image at ``path``: a regular file, no link (none at all
    below ``within``), at most :data:`MAX_IMAGE_BYTES`, its header within the limits;
    :class:`ImageRefused` in one line otherwise."""
    try:
        data = read_untrusted_sync(path, max_bytes=MAX_IMAGE_BYTES, within=within)
    except UntrustedFile as exc:
        raise ImageRefused(f"{what} not read: {exc}") from None
    except OSError as exc:  # a folder on the way is a link or no folder
        raise ImageRefused(f"{what} not read ({exc.strerror or exc})") from None
    return data, check_image(data, what).kind


def _user_screenshot(path: Path) -> _Checked:
    # the user named it: a missing file is their mistake (an InputError, exit 2), and a
    # link they made is theirs to follow; the file itself is read as any image is
    p = require_file(path, "screenshot").resolve()
    data, kind = read_image(p, f"screenshot {p}")
    return _Checked(p, data, kind, "screenshot")


def load_screenshots(
    screenshots: Sequence[Path],
    linked: Sequence[Path] = (),
    artifacts_dir: Path | None = None,
    *,
    within: Path | None = None,
) -> tuple[tuple[Screenshot, ...], tuple[str, ...]]:
    """The ``--screenshot`` files and the report's ``linked`` images (read only below
    ``within``, the report's folder): checked, kept in ``artifacts_dir``, read by OCR
    (one sandbox for all). A missing screenshot is an InputError; a bad image is a note."""
    notes: list[str] = []
    checked: list[_Checked] = []
    for path in screenshots:
        try:
            checked.append(_user_screenshot(path))
        except ImageRefused as exc:
            notes.append(f"{exc}; left out")
    for path in linked:
        what = f"image {path.name} linked in the report"
        try:
            data, kind = read_image(path, what, within=within)
        except ImageRefused as exc:
            notes.append(f"{exc}; left out")
            continue
        checked.append(_Checked(path, data, kind, "report"))
    texts = ocr_images([OcrImage(_name(c), c.data, c.kind) for c in checked])
    shots = [
        _keep(c, text, artifacts_dir, i)
        for i, (c, text) in enumerate(zip(checked, texts, strict=True))
    ]
    notes.extend(s.note for s in shots if s.note)
    return tuple(shots), tuple(notes)


def load_screenshot(path: Path, artifacts_dir: Path | None = None, *, index: int = 0) -> Screenshot:
    """One ``--screenshot``: checked (:class:`ImageRefused` if bad), kept, read by OCR."""
    c = _user_screenshot(path)
    (text,) = ocr_images([OcrImage(_name(c), c.data, c.kind)])
    return _keep(c, text, artifacts_dir, index)


def _name(c: _Checked) -> str:
    return f"screenshot {c.source.name}" if c.origin == "screenshot" else f"image {c.source.name}"


def _keep(c: _Checked, ocr: OcrText, artifacts_dir: Path | None, index: int) -> Screenshot:
    artifact = c.source
    if artifacts_dir is not None:
        target_dir = Path(artifacts_dir) / "screenshots"
        target_dir.mkdir(parents=True, exist_ok=True)
        artifact = target_dir / f"{index:02d}-{c.source.name}"
        # the bytes that were checked, not the file again; never through a planted link
        write_output(artifact, c.data, what="screenshot artifact")
    return Screenshot(c.source, artifact, c.kind, ocr.text, ocr.note, c.origin, ocr.sandboxed)


def with_image_texts(report: BugReport, shots: Sequence[Screenshot]) -> BugReport:
    """``report`` with each image's OCR text as one more comment: read like pasted text."""
    added = tuple(f"{s.label} (its text, read by OCR):\n{s.text}" for s in shots if s.text)
    return replace(report, comments=(*report.comments, *added)) if added else report
