"""The root cause a validated fix confirms.

The root-cause stage chooses a region before any candidate has run; the
validated fix is stronger evidence than that choice: its change made the
failing tests pass and broke none. When the fix changes lines of another
suspicious region than the chosen one (a judge that named the wrong place,
a tie broken the wrong way), the report's root cause is that region, so
the report never names one place as the cause and fixes another. The
region moved from is kept in a note, and the explanation says why.

A fix that touches the chosen region (any of its hunks) confirms it as it
is; a fix outside every listed region moves nothing: the regions are the
only places with evidence to explain.
"""

from __future__ import annotations

from collections.abc import Sequence

from fixbugs.inputs import BugInputs
from fixbugs.localize.regions import Region
from fixbugs.repair.patch import Hunk, diff_hunks
from fixbugs.run.record import BugRun, Diagnosis, RootCause, Validation
from fixbugs.stages.rootcause import evidence_explanation, origin_of

__all__ = ["confirmed_diagnosis"]


def _touches(hunks: Sequence[Hunk], path: str, start: int, end: int) -> bool:
    return any(h.touches(path, start, end) for h in hunks)


def confirmed_diagnosis(
    inputs: BugInputs, prior: BugRun, validation: Validation
) -> tuple[Diagnosis | None, str | None]:
    """``prior``'s diagnosis with the root cause the validated fix confirms, and the note
    that says it moved (None when nothing moved)."""
    diagnosis = prior.diagnosis
    fix = validation.candidate if validation.validated else None
    if diagnosis is None or diagnosis.root_cause is None or fix is None:
        return diagnosis, None
    rc = diagnosis.root_cause
    hunks = diff_hunks(fix.diff)
    if _touches(hunks, rc.path, rc.start, rc.end):
        return diagnosis, None
    region: Region | None = next(
        (r for r in diagnosis.regions if _touches(hunks, r.path, r.start, r.end)), None
    )
    if region is None:
        return diagnosis, None
    was = f"{rc.path} (lines {rc.start}-{rc.end}, chosen by {rc.origin})"
    moved = RootCause(
        region.path,
        region.start,
        region.end,
        evidence_explanation(region, inputs, prior)
        + f" The validated fix changes these lines; the root cause chosen before was {was}.",
        origin_of(prior, region),
        region.reasons,
        region.function,
    )
    note = (
        f"the validated fix changes {region.path} (lines {region.start}-{region.end}), "
        f"not the root cause chosen before, {was}: the report's root cause is the fix's region"
    )
    return diagnosis.model_copy(update={"root_cause": moved}), note
