"""The repair engine's part of the markdown report.

The JSON report carries the structured record under ``repair``
(:func:`fixbugs.stages.validate.repair_summary`); this renders it for a
person: each validated fix with its overfitting risk, diff and timings, and
how many candidates each validation stage rejected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["repair_markdown"]


def repair_markdown(rep: Mapping[str, Any] | None) -> list[str]:
    if not rep:
        return []
    out = ["", "## Repair", ""]
    stages = rep.get("rejected_by_stage") or {}
    rejected = ", ".join(f"{k} {v}" for k, v in stages.items()) or "none"
    first = rep.get("first_validated_s")
    out.append(
        f"{rep.get('candidates', 0)} candidate(s) ranked; rejected by stage: {rejected}; "
        f"validation took {rep.get('wall_s', 0):.1f} s"
        + (f", first validated fix after {first:.1f} s." if first is not None else ".")
    )
    for fix in rep.get("validated") or []:
        out += [
            "",
            f"- **validated** `{fix['path']}` line {fix['lines'][0]} ({fix['template']}): "
            f"{fix['why']} — overfit risk: {fix['overfit_risk']}, "
            f"validated in {fix['seconds']:.1f} s",
            "",
            "```diff",
            fix["diff"].rstrip("\n"),
            "```",
        ]
    return out
