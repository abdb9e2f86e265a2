"""What building one pool case came to: built, or skipped with the reason, in one line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["PoolBuild"]


@dataclass(frozen=True, slots=True)
class PoolBuild:
    """One case of one source: ``case_dir`` when built, else ``skipped`` says why in one line.

    ``source`` names where it came from (``bugsinpy``, ``swebench``); ``has_issue``
    says whether the case carries its user's own issue text (``issue.md``).
    """

    case_id: str
    source: str
    case_dir: Path | None = None
    skipped: str | None = None
    has_issue: bool = False

    @property
    def built(self) -> bool:
        return self.case_dir is not None and self.skipped is None
