"""Text read from images by OCR, inside the sandbox and never on the host.

An image is a stranger's file, and an OCR engine is a large C program
(``tesseract`` over Leptonica, libpng, libjpeg, giflib, libwebp) that
decodes it: exactly what a crafted file attacks. So the engine runs where a
repository's tests run, through the sandbox (:class:`~fixbugs.sandbox.Sandbox`,
the project's one way to run a contained command): the images' bytes,
already read bounded and checked (:mod:`fixbugs.inputs.images`), are written
into a fresh private folder of ours, a sandbox copies that folder, and
``tesseract IMAGE stdout`` runs there as a uid of its own, with no network,
under a time, memory, process and output limit. Only its stdout comes back.

Where this machine cannot isolate a command (no root, no bubblewrap or
setpriv: :func:`~fixbugs.sandbox.probe`), OCR is skipped with one line: a
weaker sandbox would run the decoder as the user, which is what this module
exists to avoid. The engine is Debian's ``tesseract-ocr``
(``scripts/system-deps`` installs it); where it is missing, the same.

OCR of a traceback confuses a few characters in ways that stop a parser:
curly quotes for straight ones, and around a frame's path a quote read as
``'``, ``’`` or ``*``. :func:`normalize_ocr` undoes only those: typographic
quotes become ASCII ones, and a line shaped like a CPython frame
(``File <q>path.py<q>, line N``) gets straight double quotes around its path.
Nothing else is rewritten, nothing is tuned to one image.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fixbugs.inputs.images import ImageKind
from fixbugs.sandbox import Sandbox, probe
from fixbugs.sandbox.untrusted import HostFolder

__all__ = ["OCR_TIMEOUT_S", "OcrImage", "OcrText", "normalize_ocr", "ocr_images", "unavailable"]

OCR_TIMEOUT_S = 60
OCR_MEMORY_MB = 1536  # a 40-megapixel image decoded, binarized and laid out
MAX_TEXT_BYTES = 200_000
# the engine is found where Debian puts it, inside the sandbox: not on the caller's PATH
OCR_PATH = "/usr/local/bin:/usr/bin:/bin"
# a CPython frame line as OCR reads it: any quote-like mark around a .py path
_FRAME = re.compile(
    r"^(?P<indent>[ \t]{0,40})File\s{0,3}[\"'*`](?P<path>[^\"'*`\n]{1,1000}?\.pyx?)[\"'*`]{0,2}"
    r"\s{0,3},\s{0,3}line\s{1,3}(?P<line>\d{1,7})",
    re.M,
)
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "″": '"', "‘": "'", "’": "'", "‚": "'"})


@dataclass(frozen=True, slots=True)
class OcrImage:
    """One checked image: ``name`` is how notes call it."""

    name: str
    data: bytes
    kind: ImageKind


@dataclass(frozen=True, slots=True)
class OcrText:
    """What OCR read from one image, or why it read nothing (one line)."""

    text: str | None
    note: str | None
    sandboxed: bool = False  # the engine ran, inside the sandbox


def unavailable() -> str | None:
    """Why OCR cannot run on this machine, or ``None`` if it can."""
    found = probe()
    if not (found.namespaces and found.separate_uid):
        return "no sandbox here (needs root, bubblewrap and setpriv); OCR never runs outside one"
    if shutil.which("tesseract", path=OCR_PATH) is None:
        return "tesseract is not installed (apt-get install tesseract-ocr)"
    return None


def normalize_ocr(text: str) -> str:
    """OCR text as it was typed: ASCII quotes, frame paths quoted as CPython quotes them,
    lines right-stripped."""
    lines = [line.rstrip() for line in text.translate(_QUOTES).splitlines()]
    fixed = _FRAME.sub(r'\g<indent>File "\g<path>", line \g<line>', "\n".join(lines))
    return fixed.strip()


def ocr_images(images: Sequence[OcrImage]) -> list[OcrText]:
    """The text of each image, read in one sandbox; blocks (it runs an event loop of
    its own, in a thread of its own when the caller's thread already runs one)."""
    if not images:
        return []
    why = unavailable()
    if why is not None:
        return [OcrText(None, f"{img.name}: text not read ({why})") for img in images]
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _ocr_all(images)
    with ThreadPoolExecutor(1, thread_name_prefix="fixbugs-ocr") as pool:
        return pool.submit(_ocr_all, images).result()


def _ocr_all(images: Sequence[OcrImage]) -> list[OcrText]:
    names = [f"{i:02d}.{img.kind}" for i, img in enumerate(images)]
    try:
        with tempfile.TemporaryDirectory(prefix="fixbugs-ocr-") as folder:
            with HostFolder.open(Path(folder)) as host:
                for name, img in zip(names, images, strict=True):
                    host.write(name, img.data, mode=0o644)
            with Sandbox.create(Path(folder), disk_mb=16) as sandbox:
                return asyncio.run(_run_all(sandbox, names, images))
    except (OSError, RuntimeError) as exc:
        line = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        return [
            OcrText(None, f"{img.name}: text not read (the sandbox failed: {line})")
            for img in images
        ]


async def _run_all(
    sandbox: Sandbox, names: Sequence[str], images: Sequence[OcrImage]
) -> list[OcrText]:
    out: list[OcrText] = []
    for name, img in zip(names, images, strict=True):
        done = await sandbox.run(
            ["tesseract", name, "stdout"],
            timeout_s=OCR_TIMEOUT_S,
            memory_mb=OCR_MEMORY_MB,
            max_output_bytes=MAX_TEXT_BYTES,
            max_processes=16,
            max_file_mb=16,
            # one thread: the engine's OpenMP pool would multiply its memory and processes
            env={"PATH": OCR_PATH, "OMP_THREAD_LIMIT": "1"},
        )
        if done.timed_out:
            out.append(OcrText(None, f"{img.name}: OCR gave up after {OCR_TIMEOUT_S} s", True))
        elif done.limit_hit is not None:
            out.append(
                OcrText(None, f"{img.name}: OCR stopped at its {done.limit_hit} limit", True)
            )
        elif done.returncode != 0:
            said = (done.stderr.strip().splitlines() or ["no message"])[-1][:200]
            out.append(OcrText(None, f"{img.name}: OCR failed ({said})", True))
        else:
            text = normalize_ocr(done.stdout)
            note = None if text else f"{img.name}: OCR found no text"
            out.append(OcrText(text or None, note, True))
    return out
