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

With no validated fix, a judgment that left the evidence's best region is
unconfirmed where the run could have confirmed it (candidates ran, the
judge's rewrite first): the report's root cause is then the evidence's
best region, and the judgment's region is kept in a note. A model's word is
not evidence; what a model adds must be confirmed by what runs before it
displaces what the evidence says, so a wrong judgment never leaves a run
worse than no model (measured with the noisy oracle, whose wrong answers
are the same in every sample: on dev two judgments agreed on a wrong
region in thefuck-4 and 24, no fix validated, and the evidence's right
region was displaced). Where nothing could run (the bug was not
reproduced), the judgment stands: no test could have confirmed anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from fixbugs.diffs import Hunk, diff_hunks
from fixbugs.inputs import BugInputs
from fixbugs.localize.regions import Region
from fixbugs.run.record import BugRun, Diagnosis, RootCause, Validation
from fixbugs.stages.explain import evidence_explanation, origin_of
from fixbugs.stages.quorum import same_place

__all__ = ["confirmed_diagnosis"]


def _touches(hunks: Sequence[Hunk], path: str, start: int, end: int) -> bool:
    return any(h.touches(path, start, end) for h in hunks)


def confirmed_diagnosis(
    inputs: BugInputs, prior: BugRun, validation: Validation
) -> tuple[Diagnosis | None, str | None]:
    """``prior``'s diagnosis with the root cause validation confirms, and the note that
    says it moved (None when nothing moved)."""
    diagnosis = prior.diagnosis
    if diagnosis is None or diagnosis.root_cause is None:
        return diagnosis, None
    rc = diagnosis.root_cause
    was = f"{rc.path} (lines {rc.start}-{rc.end}, chosen by {rc.origin})"
    fix = validation.candidate if validation.validated else None
    if fix is None:
        best = diagnosis.regions[0] if diagnosis.regions else None
        if validation.tried == 0 or rc.origin != "model" or best is None or same_place(rc, best):
            return diagnosis, None
        moved = _root_cause(
            best, inputs, prior, f" The judgment named {was}; no validated fix confirmed it."
        )
        note = (
            f"no validated fix confirmed the judgment's root cause, {was}, which leaves the "
            f"evidence's best region: the report's root cause is {best.path} (lines "
            f"{best.start}-{best.end})"
        )
        return diagnosis.with_root_cause(moved), note
    hunks = diff_hunks(fix.diff)
    if _touches(hunks, rc.path, rc.start, rc.end):
        return diagnosis, None
    region: Region | None = next(
        (r for r in diagnosis.regions if _touches(hunks, r.path, r.start, r.end)), None
    )
    if region is None:
        return diagnosis, None
    moved = _root_cause(
        region,
        inputs,
        prior,
        f" The validated fix changes these lines; the root cause chosen before was {was}.",
    )
    note = (
        f"the validated fix changes {region.path} (lines {region.start}-{region.end}), "
        f"not the root cause chosen before, {was}: the report's root cause is the fix's region"
    )
    return diagnosis.with_root_cause(moved), note


def _root_cause(region: Region, inputs: BugInputs, prior: BugRun, why: str) -> RootCause:
    """``region`` as the root cause, explained by its evidence and ``why`` it moved there."""
    return RootCause(
        region.path,
        region.start,
        region.end,
        evidence_explanation(region, inputs, prior) + why,
        origin_of(prior, region),
        region.reasons,
        region.function,
    )
