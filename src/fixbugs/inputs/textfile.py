"""Is a file text? And what of it a person meant: one answer for every input.

Two questions, kept apart on purpose:

* :func:`looks_binary` — should a *repository file* be read as source? A
  NUL byte or mostly control bytes in the first block says no (what git and
  grep do); skipping a source file costs little.
* :func:`looks_binary_document` — should a *document a person gave us*
  (a bug report, a log) be refused? Pasted terminal output holds NUL bytes
  (``find -print0``, ``xargs -0``), ANSI colours and carriage-return
  progress bars, and refusing it would refuse the user's own words. Only
  known binary formats (images, archives, executables) and files that are
  mostly non-text bytes are refused; the rest is cleaned by
  :func:`clean_text`, which says what it removed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fixbugs.errors import InputError

__all__ = [
    "GZIP_MAGIC",
    "CleanedText",
    "clean_text",
    "looks_binary",
    "looks_binary_document",
    "require_file",
]

SNIFF_BYTES = 8192
GZIP_MAGIC = b"\x1f\x8b"
# Control bytes that text legitimately holds: tab, newline, CR, form feed, ESC, backspace.
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\x1b\b")
# Signatures of formats that are never a document, whatever follows them.
_BINARY_MAGIC = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",  # JPEG
    b"GIF87a",
    b"GIF89a",
    b"%PDF-",
    b"PK\x03\x04",  # zip, jar, wheel, docx
    GZIP_MAGIC,
    b"BZh",
    b"\xfd7zXZ\x00",
    b"7z\xbc\xaf\x27\x1c",
    b"\x7fELF",
    b"\xcf\xfa\xed\xfe",  # Mach-O
    b"\xca\xfe\xba\xbe",  # Mach-O fat / Java class
    b"SQLite format 3\x00",
    b"\x00asm",
    b"RIFF",
)
_ANSI = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC (titles, hyperlinks)
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI (colours, cursor moves)
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
)
_CONTROLS = re.compile(r"[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]")


def looks_binary(head: bytes) -> bool:
    """True when ``head`` (a file's first bytes) is not text (strict: source files)."""
    if not head:
        return False
    if b"\0" in head:
        return True
    controls = sum(1 for b in head if b < 32 and b not in _TEXT_CONTROLS)
    return controls / len(head) > 0.3


def looks_binary_document(head: bytes) -> bool:
    """True when ``head`` is a binary format or mostly non-text bytes (lenient: documents).

    NUL and other control bytes count as non-text, and so do bytes that are
    not valid UTF-8; a pasted log with a few NULs or colour codes is text.
    """
    if not head:
        return False
    if head.startswith(_BINARY_MAGIC):
        return True
    text = head.decode("utf-8", errors="replace")
    bad = sum(1 for c in text if c == "\ufffd" or (ord(c) < 32 and ord(c) not in _TEXT_CONTROLS))
    return bad / max(1, len(text)) > 0.3


@dataclass(frozen=True, slots=True)
class CleanedText:
    text: str
    ansi: int = 0
    nul: int = 0
    carriage_returns: int = 0
    controls: int = 0

    def note(self, what: str) -> str | None:
        """One line saying what was cleaned, or None when nothing was."""
        parts = []
        if self.ansi:
            parts.append(f"{self.ansi} ANSI escape sequence(s) removed")
        if self.nul:
            parts.append(f"{self.nul} NUL byte(s) read as line breaks")
        if self.carriage_returns:
            parts.append(f"{self.carriage_returns} carriage-return progress line(s) collapsed")
        if self.controls:
            parts.append(f"{self.controls} other control byte(s) removed")
        return f"{what}: cleaned terminal output ({', '.join(parts)})" if parts else None


def _collapse_cr(line: str) -> tuple[str, bool]:
    """What a terminal shows of a line redrawn with ``\\r``: its last non-empty state."""
    body = line.rstrip("\r")
    if "\r" not in body:
        return body, False
    parts = [p for p in body.split("\r") if p.strip()]
    return (parts[-1] if parts else ""), True


def clean_text(text: str) -> CleanedText:
    """Terminal output as a person saw it: escapes, progress redraws and NULs removed.

    NUL becomes a line break (NUL-delimited output lists one item per NUL);
    a line redrawn with carriage returns keeps its final state; backspace
    overstrikes are applied; other control bytes are dropped. CRLF line
    ends are plain line ends, not progress lines.
    """
    text, ansi = _ANSI.subn("", text)
    nul = text.count("\0")
    text = text.replace("\0", "\n")
    text = text.replace("\r\n", "\n")
    lines, crs = [], 0
    for line in text.split("\n"):
        kept, redrawn = _collapse_cr(line)
        crs += redrawn
        lines.append(kept)
    text = "\n".join(_overstruck(line) if "\b" in line else line for line in lines)
    text, controls = _CONTROLS.subn("", text)
    return CleanedText(text, ansi, nul, crs, controls)


def _overstruck(line: str) -> str:
    """``line`` with each backspace and the character before it removed, as a terminal
    shows it; one pass with a stack (removing pairs by pattern until none is left
    took one pass per backspace, quadratic on a long run of them)."""
    kept: list[str] = []
    for c in line:
        if c == "\b" and kept and kept[-1] != "\b":
            kept.pop()
        else:
            kept.append(c)
    return "".join(kept)


def require_file(path: Path, what: str) -> Path:
    """``path`` as a readable regular file, or an InputError naming it."""
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(f"{what} {p} does not exist; check the path")
    if not p.is_file():
        raise InputError(f"{what} {p} is not a file; give the path of a file")
    try:
        with p.open("rb") as f:
            f.read(1)
    except OSError as e:
        raise InputError(f"{what} {p} cannot be read ({e.strerror}); check its permissions") from e
    return p
