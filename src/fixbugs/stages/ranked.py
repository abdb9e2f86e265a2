"""The top of a file ranking as a progress event, as the analysis and the root cause show it.

A shared part of the stages: it imports no stage.
"""

from __future__ import annotations

from collections.abc import Sequence

from fixbugs.localize.rank import RankedFile
from fixbugs.run.context import RunContext
from fixbugs.run.progress import RankedFileData, RankedFilesData

__all__ = ["ranked_event"]


def ranked_event(ctx: RunContext, stage: str, what: str, ranked: Sequence[RankedFile]) -> None:
    """The top of a ranking as an event (the analysis's, then the root cause's)."""
    files = tuple(RankedFileData(r.path, round(r.score, 3), tuple(r.reasons)) for r in ranked[:10])
    ctx.journal.emit("ranked_files", stage, what, RankedFilesData(files))
