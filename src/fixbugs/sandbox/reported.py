"""Paths a test run wrote down, mapped to files of the pristine baseline, or dropped.

What a test run writes is the repository's to shape: a package shadowing
``coverage`` writes any JSON it likes, a ``conftest.py`` prints any test id.
Such data can name ``/root/x``, ``../../etc/passwd``, a link inside the copy
to a host file, ``/proc/1/cwd/…`` of another sandbox, or the service's key
file; a path taken from it and opened on the host is read as root. So a
reported path is data, never a path to follow: :meth:`CopyPaths.check` is
the one place that maps it to a relative POSIX path naming a regular file of
the pristine baseline (and of the repository's listing, when given), and
:func:`read_baseline_text` reads such a file by that relative path alone,
following no link.
"""

from __future__ import annotations

import os
import re
import stat
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from fixbugs.sandbox.untrusted import UntrustedFile, read_untrusted_sync

__all__ = ["CopyPaths", "Drop", "KeptPaths", "read_baseline_text"]

_SHOWN = re.compile(r"[^A-Za-z0-9._/+-]")
_SHOWN_CHARS = 40


class Drop(Enum):
    """Why a reported path names no file of the baseline."""

    EMPTY = "empty or with a NUL byte"
    PROC = "under /proc"
    OUTSIDE = "absolute outside the copy"
    PARENT = "with a '..' component"
    UNLISTED = "not a listed file of the repository"
    NOT_REGULAR = "not a regular file of the baseline (missing, a link, or below one)"


@dataclass(frozen=True, slots=True)
class KeptPaths:
    """The outcome of checking a run's paths: what was kept, and how many were dropped why."""

    kept: Mapping[str, str]  # reported path -> relative path in the baseline
    dropped: Mapping[Drop, int] = field(default_factory=dict)
    example: str = ""  # one dropped path, sanitized and shortened

    def note(self, what: str) -> str | None:
        """One line saying how many of ``what``'s paths were dropped and why; None if none."""
        total = sum(self.dropped.values())
        if not total:
            return None
        why = ", ".join(f"{n} {d.value}" for d, n in self.dropped.items())
        return (
            f"{what} named {total} path(s) that name no file of the repository, dropped "
            f"({why}; e.g. {self.example!r})"
        )


@dataclass(frozen=True, slots=True)
class CopyPaths:
    """How a path reported by a run in a copy maps back to the pristine ``baseline``.

    ``seen_at`` are the paths the run saw the copy at (the sandbox binds the
    copy at its own path; both the given and the resolved form count): an
    absolute path below one is made relative to it, any other absolute path is
    dropped. ``listed`` (the repository's file listing, when given) narrows the
    files that count to the listed ones. With ``baseline`` None the file must
    be listed (``listed`` is then required).
    """

    baseline: Path | None
    seen_at: tuple[str, ...] = ()  # longest first, no trailing slash
    listed: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.baseline is None and self.listed is None:
            raise ValueError("a reported path needs a baseline or a listing to be checked against")

    @classmethod
    def of(
        cls,
        baseline: Path | None,
        *,
        seen_at: Sequence[Path] = (),
        listed: Collection[str] | None = None,
    ) -> CopyPaths:
        roots = {str(p).rstrip("/") for p in seen_at} | {
            os.path.realpath(p).rstrip("/") for p in seen_at
        }
        longest = tuple(sorted((r for r in roots if r), key=len, reverse=True))
        return cls(baseline, longest, _frozen(listed))

    def check(self, reported: str) -> str | Drop:
        """The relative POSIX path in the baseline ``reported`` names, or why it names none."""
        rel = self._relative(reported)
        if isinstance(rel, Drop):
            return rel
        if self.listed is not None and rel not in self.listed:
            return Drop.UNLISTED
        if self.baseline is not None and not _regular_below(self.baseline, rel):
            return Drop.NOT_REGULAR
        return rel

    def file(self, reported: str) -> str | None:
        """:meth:`check`'s relative path, or None for a dropped one."""
        rel = self.check(reported)
        return None if isinstance(rel, Drop) else rel

    def keep(self, reported: Iterable[str]) -> KeptPaths:
        """Check every path of ``reported``; count the dropped ones by reason."""
        kept: dict[str, str] = {}
        dropped: Counter[Drop] = Counter()
        example = ""
        for raw in reported:
            rel = self.check(raw)
            if isinstance(rel, Drop):
                dropped[rel] += 1
                example = example or _shown(raw)
            else:
                kept[raw] = rel
        return KeptPaths(kept, dict(dropped), example)

    def _relative(self, reported: str) -> str | Drop:
        if not reported or "\0" in reported:
            return Drop.EMPTY
        path = reported
        if path.startswith("/"):
            if path == "/proc" or path.startswith("/proc/"):
                return Drop.PROC
            root = next((r for r in self.seen_at if path.startswith(r + "/")), None)
            if root is None:
                return Drop.OUTSIDE
            path = path[len(root) + 1 :]
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if ".." in parts:  # refused, not collapsed: 'a/../b' may pass through a link
            return Drop.PARENT
        return "/".join(parts) if parts else Drop.EMPTY


def _frozen(listed: Collection[str] | None) -> frozenset[str] | None:
    return None if listed is None else frozenset(listed)


def _regular_below(tree: Path, rel: str) -> bool:
    """``tree/rel`` is a regular file, and no component below ``tree`` is a link."""
    here = tree
    parts = rel.split("/")
    try:
        for i, part in enumerate(parts):
            here = here / part
            mode = os.lstat(here).st_mode
            if not (stat.S_ISREG(mode) if i == len(parts) - 1 else stat.S_ISDIR(mode)):
                return False
    except (OSError, ValueError):
        return False
    return True


def _shown(raw: str) -> str:
    """A reported path as a note may show it: plain characters only, short."""
    shown = _SHOWN.sub("?", raw)
    return shown if len(shown) <= _SHOWN_CHARS else shown[: _SHOWN_CHARS - 1] + "…"


def read_baseline_text(baseline: Path, reported: str, *, max_bytes: int = 4 << 20) -> str | None:
    """The text of the baseline file ``reported`` names (see :class:`CopyPaths`), or None.

    Read by its relative path below ``baseline``, opening no link at any level.
    A caller that knows the repository's listing checks it first.
    """
    rel = CopyPaths(baseline).file(reported)
    if rel is None:
        return None
    try:
        data = read_untrusted_sync(baseline / rel, max_bytes=max_bytes, within=baseline)
    except UntrustedFile:
        return None
    return data.decode("utf-8", errors="replace")
