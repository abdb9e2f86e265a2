"""Is a file text? One answer for every input that must be read as text.

Reports, logs and source files are all rejected or skipped when binary;
the test is the same everywhere: a NUL byte, or mostly control bytes, in
the first block (what git and grep do).
"""

from __future__ import annotations

from pathlib import Path

from fixbugs.errors import InputError

__all__ = ["GZIP_MAGIC", "looks_binary", "require_file"]

SNIFF_BYTES = 8192
GZIP_MAGIC = b"\x1f\x8b"
# Control bytes that text legitimately holds: tab, newline, CR, form feed, ESC, backspace.
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\x1b\b")


def looks_binary(head: bytes) -> bool:
    """True when ``head`` (a file's first bytes) is not text."""
    if not head:
        return False
    if b"\0" in head:
        return True
    controls = sum(1 for b in head if b < 32 and b not in _TEXT_CONTROLS)
    return controls / len(head) > 0.3


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
