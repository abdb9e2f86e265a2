"""What a root-cause region stands on, said from the evidence alone.

The root cause's judgment and the confirmation of a diagnosis both explain a
region this way. A shared part of the stages: it imports no stage.
"""

from __future__ import annotations

from typing import Literal

from fixbugs.inputs import BugInputs
from fixbugs.localize.assertions import assertion_values
from fixbugs.localize.regions import Region
from fixbugs.run.record import BugRun

__all__ = ["evidence_explanation", "origin_of"]


def evidence_explanation(region: Region, inputs: BugInputs, prior: BugRun) -> str:
    """An explanation that says only what the evidence says."""
    where = f"{region.function}()" if region.function else "module-level code"
    out = f"{where} in {region.path} (lines {region.start}-{region.end}): "
    out += "; ".join(region.reasons[:3]) + "."
    failure = prior.analysis.failure
    if failure is not None and failure.exception_type:
        msg = f": {failure.exception_message}" if failure.exception_message else ""
        out += f" The failure is {failure.exception_type}{msg}."
    values = assertion_values(inputs.report.text)
    if values:
        a = values[0]
        out += f" The failing assertion got {a.actual} where {a.expected} was expected."
    return out[:600]


def origin_of(prior: BugRun, region: Region) -> Literal["sbfl", "static"]:
    """Which evidence a region stands on: SBFL where the reproduction covered its file."""
    return "sbfl" if prior.sbfl.suspicious.get(region.path) else "static"
