"""File evidence: one reason, from one signal, to suspect one file.

Every localization signal (traceback frames, test imports, naming
conventions, report symbols, quoted code lines, string literals, typed
commands, BM25, spectrum-based fault localization, model
relevance) produces the same record, so ranking is one merge over a flat
list and every score can be explained by the reasons that made it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KINDS", "FileEvidence"]

# The signal kinds, strongest first; rank.py gives each a weight.
KINDS = (
    "traceback",
    "path",
    "quoted",
    "sbfl",
    "naming",
    "command",
    "trace",
    "call",
    "name",
    "import",
    "neighbour",
    "symbol",
    "literal",
    "warning",
    "bm25",
    "model",
)


@dataclass(frozen=True, slots=True)
class FileEvidence:
    """``strength`` is in [0, 1] within its ``kind``; ``lines`` are 1-based inclusive ranges."""

    path: str
    kind: str
    strength: float
    reason: str
    lines: tuple[tuple[int, int], ...] = ()
