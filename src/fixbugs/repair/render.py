"""The repair engine's part of the markdown report.

The JSON report carries the structured record under ``repair``
(:func:`fixbugs.stages.validate.repair_summary`); this renders it for a
person: each validated fix with its overfitting risk, diff and timings, and
how many candidates each validation stage rejected; then, in a section of
their own below every fix, the candidates that pass the tests but look like
overfitting (their change swallows the exception, negates a whole condition
or returns a constant), which are never the fix. A fix's path, its
"why" (which quotes the sources) and its diff are the repository's words:
they go through :mod:`fixbugs.inputs.inert` and add no structure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fixbugs.inputs.inert import md_code, md_fence, md_text, quote_name
from fixbugs.repair.shapes import SHAPE_LABELS

__all__ = ["OVERFITTING_HEADING", "repair_markdown"]

OVERFITTING_HEADING = "Candidates that pass the tests but look like overfitting"


def repair_markdown(rep: Mapping[str, Any] | None) -> list[str]:
    if not rep:
        return []
    out = ["", "## Repair", ""]
    stages = rep.get("rejected_by_stage") or {}
    rejected = ", ".join(f"{md_text(k)} {v}" for k, v in stages.items()) or "none"
    first = rep.get("first_validated_s")
    out.append(
        f"{rep.get('candidates', 0)} candidate(s) ranked; rejected by stage: {rejected}; "
        f"validation took {rep.get('wall_s', 0):.1f} s"
        + (f", first validated fix after {first:.1f} s." if first is not None else ".")
    )
    for fix in rep.get("validated") or []:
        out += [
            "",
            f"- **validated** {md_code(quote_name(fix['path']))} line {fix['lines'][0]} "
            f"({md_text(fix['template'])}): {md_text(fix['why'])} — "
            f"overfit risk: {md_text(fix['overfit_risk'])}, validated in {fix['seconds']:.1f} s",
            "",
            *md_fence(fix["diff"].rstrip("\n"), "diff"),
        ]
    overfit = rep.get("overfitting") or []
    if overfit:
        out += [
            "",
            f"### {OVERFITTING_HEADING}",
            "",
            "Each passed every validation stage, but its change only hides the failure: "
            "none of them is the fix.",
        ]
    for fix in overfit:
        shape = SHAPE_LABELS.get(fix.get("shape"), "looks like overfitting")
        out += [
            "",
            f"- {md_code(quote_name(fix['path']))} line {fix['lines'][0]} "
            f"({md_text(fix['template'])}): {md_text(fix['why'])} — it {md_text(shape)}: "
            f"{md_text(fix.get('shape_reason') or '')}",
            "",
            *md_fence(fix["diff"].rstrip("\n"), "diff"),
        ]
    return out
