"""An image's format and size, read from its header before anything decodes it.

A screenshot, or an image a report links, is a stranger's file: a 60 KB PNG
may declare 100,000 × 100,000 pixels (a decompression bomb: forty gigabytes
once decoded), and a file named ``.png`` may be anything. So an image is
judged here from its bytes alone, without a decoder: the format by its
magic bytes, the pixel dimensions from the header each format puts first
(PNG's ``IHDR``, JPEG's start-of-frame marker, GIF's logical screen, WebP's
``VP8``/``VP8L``/``VP8X`` chunk). An image past :data:`MAX_IMAGE_BYTES` or
:data:`MAX_PIXELS`, or whose header cannot be read, is refused with one
line (:class:`ImageRefused`) and never reaches the OCR engine.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Literal

from fixbugs.errors import InputError

__all__ = [
    "MAX_IMAGE_BYTES",
    "MAX_PIXELS",
    "ImageKind",
    "ImageRefused",
    "ImageShape",
    "check_image",
    "image_kind",
]

ImageKind = Literal["png", "jpeg", "gif", "webp"]
MAX_IMAGE_BYTES = 20 << 20  # a full-screen PNG of text is a few MB
MAX_PIXELS = 40_000_000  # an 8K screen is 33 megapixels
_JPEG_SOF = frozenset(
    {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
)
_JPEG_BARE = frozenset({0x01, *range(0xD0, 0xD9)})  # markers without a length: TEM, RSTn, SOI, EOI


class ImageRefused(InputError):
    """An image that is not what it claims, or too large to decode safely (one line)."""


@dataclass(frozen=True, slots=True)
class ImageShape:
    kind: ImageKind
    width: int
    height: int


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


def check_image(data: bytes, what: str) -> ImageShape:
    """The format and pixel size of ``data``; :class:`ImageRefused` naming ``what`` if
    it is no image, its header is unreadable, or it is past the size limits."""
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageRefused(f"{what} is {len(data)} bytes, over the {MAX_IMAGE_BYTES} byte limit")
    kind = image_kind(data[:12])
    if kind is None:
        raise ImageRefused(f"{what} is not a PNG, JPEG, GIF or WebP image")
    size = _dimensions(kind, data)
    if size is None:
        raise ImageRefused(f"{what} is not a readable {kind.upper()} image (its header is broken)")
    width, height = size
    if width <= 0 or height <= 0:
        raise ImageRefused(f"{what} declares an empty {width} × {height} image")
    if width * height > MAX_PIXELS:
        raise ImageRefused(
            f"{what} declares {width} × {height} pixels, over the limit of "
            f"{MAX_PIXELS // 1_000_000} megapixels (a decompression bomb, or no screenshot)"
        )
    return ImageShape(kind, width, height)


def _dimensions(kind: ImageKind, data: bytes) -> tuple[int, int] | None:
    if kind == "png":
        return _png(data)
    if kind == "gif":
        return struct.unpack_from("<HH", data, 6) if len(data) >= 10 else None
    if kind == "jpeg":
        return _jpeg(data)
    return _webp(data)


def _png(data: bytes) -> tuple[int, int] | None:
    """IHDR must be the first chunk, 13 bytes long."""
    if len(data) < 24 or data[8:16] != b"\x00\x00\x00\x0dIHDR":
        return None
    width, height = struct.unpack_from(">II", data, 16)
    return width, height


def _jpeg(data: bytes) -> tuple[int, int] | None:
    """Walk the marker segments to the first start-of-frame (its height, then width)."""
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in _JPEG_BARE:
            pos += 2
            continue
        (length,) = struct.unpack_from(">H", data, pos + 2)
        if length < 2:
            return None
        if marker in _JPEG_SOF:
            if pos + 9 > len(data):
                return None
            height, width = struct.unpack_from(">HH", data, pos + 5)
            return width, height
        if marker == 0xDA:  # start of scan before any frame header
            return None
        pos += 2 + length
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    """The first chunk: lossy ``VP8 ``, lossless ``VP8L`` or extended ``VP8X``."""
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack_from("<HH", data, 26)
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        (bits,) = struct.unpack_from("<I", data, 21)
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return None
