"""The repair engine's part of the markdown report.

The JSON report carries the structured record under ``repair``
(:class:`fixbugs.repair.summary.RepairSummary`); this renders it for a
person: each validated fix with its overfitting risk, diff and timings, and
how many candidates each validation stage rejected; then, in a section of
their own below every fix, the candidates that pass the tests but fail a
check (their change swallows the exception, negates a whole condition,
swaps a condition's operand, returns early past the function's effects...),
each failed check on its line: none of them is validated. A fix's path, its
"why" (which quotes the sources) and its diff are the repository's words:
they go through :mod:`fixbugs.inputs.inert` and add no structure.
"""

from __future__ import annotations

from fixbugs.inputs.inert import md_code, md_fence, md_text, quote_name
from fixbugs.repair.shapes import SHAPE_LABELS
from fixbugs.repair.summary import PassedCandidate, RepairSummary

__all__ = ["OVERFITTING_HEADING", "repair_markdown"]

OVERFITTING_HEADING = "Candidates that pass the tests but fail a check"


def repair_markdown(rep: RepairSummary | None) -> list[str]:
    if rep is None:
        return []
    out = ["", "## Repair", ""]
    rejected = ", ".join(f"{md_text(k)} {v}" for k, v in rep.rejected_by_stage.items()) or "none"
    first = rep.first_validated_s
    out.append(
        f"{rep.candidates} candidate(s) ranked; rejected by stage: {rejected}; "
        f"validation took {rep.wall_s:.1f} s"
        + (f", first validated fix after {first:.1f} s." if first is not None else ".")
    )
    for fix in rep.validated:
        seconds = f", validated in {fix.seconds:.1f} s" if fix.seconds is not None else ""
        out += [
            "",
            f"- **validated** {_where(fix)}: {md_text(fix.why)} — "
            f"overfit risk: {md_text(fix.overfit_risk)}{seconds}",
            "",
            *md_fence(fix.diff.rstrip("\n"), "diff"),
        ]
    if rep.overfitting:
        out += [
            "",
            f"### {OVERFITTING_HEADING}",
            "",
            "Each passed every validation stage, but its change hides the failure or "
            "changes what else the code does: none of them is validated.",
        ]
    for fix in rep.overfitting:
        out += ["", f"- {_where(fix)}: {md_text(fix.why)}"]
        if fix.checks:
            out += [f"  - it {md_text(c.line())}" for c in fix.checks]
        else:  # a record from before the checks: its shape only
            shape = SHAPE_LABELS[fix.shape] if fix.shape else "looks like overfitting"
            out.append(f"  - it {md_text(shape)}: {md_text(fix.shape_reason or '')}")
        out += ["", *md_fence(fix.diff.rstrip("\n"), "diff")]
    return out


def _where(fix: PassedCandidate) -> str:
    return f"{md_code(quote_name(fix.path))} line {fix.lines[0]} ({md_text(fix.template)})"
