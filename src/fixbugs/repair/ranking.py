"""Ranking: suspiciousness × template prior × naturalness, then smaller diffs.

Priors follow what program-repair studies report as the families most often
behind real one-hunk fixes (string/argument mutations and conditions above
whole-value returns). Overfitting risk outranks score: a patch that negates a
whole condition, returns a constant or deletes the failing path goes after
every lower-risk candidate, whatever its score; a patch adding a literal the
tests contain is kept in place but marked ``possible``.

Whatever wrote a candidate, its change has a *shape*
(:mod:`fixbugs.repair.shapes`): one that swallows the exception, negates a
whole condition or returns a constant is high risk, goes after every other
candidate, and is never the lead fix even when it passes every test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from fixbugs.diffs import diff_hunks, make_diff
from fixbugs.repair.shapes import ChangeShape, classify_change, classify_diff
from fixbugs.repair.source import Edit
from fixbugs.repair.verdict import FailedCheck, shape_check

__all__ = ["PRIORS", "RepairCandidate", "overfit_risk", "rank", "to_candidate", "with_shape"]

OverfitRisk = Literal["low", "possible", "high"]

PRIORS: dict[str, float] = {
    "model": 0.7,
    "literal": 0.9,
    "literal_drop": 0.35,
    "regex": 0.6,
    # a part of a pattern that must match once may match nothing
    "regex_loosen": 0.6,
    # a key the failing assertion reads, added to a literal list of keys the failing
    # test ran: the assertion names what the line lacks, as direct as a literal's word
    "key_add": 0.9,
    "ingredient": 0.6,
    "ingredient_const": 0.2,
    "condition": 0.6,
    "membership": 0.5,
    "operator": 0.5,
    "guard": 0.5,
    # a loop over `s.split(sep)` that skips an empty `s`: a guard of one shape
    "empty_split": 0.5,
    # a comprehension that skips None items: only offered where the failure used a None
    "none_item": 0.65,
    "try_except": 0.45,
    "arguments": 0.45,
    "name": 0.4,
    "swap": 0.45,
    "constant": 0.4,
    "unwrap": 0.35,
    # only offered where the failing run raised IndexError: the exception names it
    "index_slice": 0.65,
    # the literal's own head, found where it is instead of assumed at the start
    "prefix_replace": 0.6,
    "fallback": 0.3,
    "return": 0.3,
    "delete": 0.1,
    "pair": 0.25,
    # a seed's edit and the one its new failure asked for (fixbugs.repair.followup)
    "stepwise": 0.25,
}


@dataclass(frozen=True, slots=True)
class RepairCandidate:
    """One ranked patch: where it came from, how likely, how risky.

    The one candidate type from the fix stage to the report: validation,
    its outcomes and the validated fix all name a candidate by its ``id``.
    """

    id: int
    path: str
    diff: str
    new_text: str
    template: str
    why: str
    start: int
    end: int
    suspiciousness: float
    prior: float
    naturalness: float
    size: int  # changed lines (added + removed)
    overfit_risk: OverfitRisk
    own: bool = True  # False: a diff this engine did not write (a caller's own)
    # swallows the exception, negates a whole condition, returns a constant: even
    # when every test passes it is not a fix (None: none of these shapes, or not judged)
    shape: ChangeShape | None = None
    # the checks it failed beyond its shape, judged once it passed every test gate
    # (fixbugs.stages.lead.judge): a fix with any is at most "passes tests"
    checks: tuple[FailedCheck, ...] = ()
    # AST nodes its change adds or removes (fixbugs.repair.demotions.change_size): among
    # candidates that pass, the smaller change leads; None until judged
    change_nodes: int | None = None

    @classmethod
    def from_diff(cls, id: int, diff: str, origin: str, why: str) -> RepairCandidate:
        """A candidate that did not come from the repair engine: a caller's own diff."""
        hunks = diff_hunks(diff)
        path = hunks[0].path if hunks else ""
        lo = min((h.start for h in hunks), default=0)
        hi = max((h.end for h in hunks), default=0)
        return cls(id, path, diff, "", origin, why, lo, hi, 1.0, 0.5, 1.0, 0, "low", own=False)

    @property
    def score(self) -> float:
        return self.suspiciousness * self.prior * self.naturalness

    @property
    def looks_overfit(self) -> bool:
        """It failed a check (an overfitting shape, ...): it may pass the tests, it is
        never ``validated`` and leads only when no clean candidate passed."""
        return self.shape is not None or bool(self.checks)

    @property
    def failed_checks(self) -> tuple[FailedCheck, ...]:
        """Every check it failed: its shape's first, then the others."""
        return ((shape_check(self.shape),) if self.shape is not None else ()) + self.checks

    @property
    def ends_search(self) -> bool:
        """Validated, it ends the search: not a high overfitting risk, no failed check."""
        return self.overfit_risk != "high" and not self.looks_overfit

    @property
    def label(self) -> str:
        """How validation's summary names it: where the engine's edit is, a caller's words."""
        return f"{self.path}:{self.start}: {self.why}" if self.own else self.why


def overfit_risk(
    edit: Edit, test_literals: frozenset[str], shape: ChangeShape | None = None
) -> OverfitRisk:
    if edit.risk == "high" or shape is not None:
        return "high"
    if edit.risk == "possible":
        return "possible"
    if any(lit in test_literals for lit in edit.literals):
        return "possible"
    return "low"


def _size(diff: str) -> int:
    """Lines a one-file diff removes or adds: its hunks' ``+``/``-`` lines (context lines,
    however many, are not; the ``---``/``+++`` header before the first hunk is not)."""
    body = diff.split("\n@@", 1)[1] if "\n@@" in diff else ""
    return sum(1 for line in body.splitlines() if line.startswith(("+", "-")))


def to_candidate(
    idx: int, edit: Edit, old_text: str, suspiciousness: float, test_literals: frozenset[str]
) -> RepairCandidate:
    shape = classify_change(old_text, edit.new_text)
    diff = make_diff(edit.path, old_text, edit.new_text)
    return RepairCandidate(
        id=idx,
        path=edit.path,
        diff=diff,
        new_text=edit.new_text,
        template=edit.template,
        why=edit.why,
        start=edit.start,
        end=edit.end,
        suspiciousness=suspiciousness,
        prior=PRIORS.get(edit.template, 0.3),
        naturalness=1.0,
        size=_size(diff),
        overfit_risk=overfit_risk(edit, test_literals, shape),
        shape=shape,
    )


def with_shape(c: RepairCandidate, files: Mapping[str, str]) -> RepairCandidate:
    """``c`` with the shape of its diff over ``files`` (path -> old text) when it had none.

    For a diff the engine did not write (a caller's, a model's): one with an
    overfitting shape becomes high risk.
    """
    if c.shape is not None:
        return c
    shape = classify_diff(c.diff, files)
    return c if shape is None else replace(c, shape=shape, overfit_risk="high")


def rank(
    cands: Sequence[RepairCandidate],
    naturalness: Callable[[RepairCandidate], float | None] | None = None,
) -> list[RepairCandidate]:
    """Best first: low risk before high (an overfitting shape last), then score, size, id."""
    scored = list(cands)
    if naturalness is not None:
        out = []
        for c in scored:
            n = naturalness(c)
            out.append(c if n is None else replace(c, naturalness=n))
        scored = out
    order = {"low": 0, "possible": 0, "high": 1}
    return sorted(
        scored,
        key=lambda c: (
            order[c.overfit_risk],
            c.shape is not None,
            c.template == "pair",
            -c.score,
            c.size,
            c.id,
        ),
    )
