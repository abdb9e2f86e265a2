"""Which of several checked judgments stands: a pure rule, no model, no I/O.

A high-trust judge may leave the evidence's best region: pick another of
the regions tied with it, overrule stronger evidence (a region whose score
is below the best's tie band), or name one the evidence did not list. A
strong model is right there often, and wrong there sometimes; a wrong
departure is the one way the judge makes a run worse than no model at all
(measured with the noisy oracle: youtube-dl-5's reported root cause moved
off the evidence's right region to a wrong one, and no validated fix came
to correct it). So on trust high a departure takes a quorum: every
judgment asked must be valid and name the same place. A judgment at the
evidence's best place needs no second voice. On trust low (one judgment,
the embedded model) the judge only breaks ties: a region within the tie
band stands, anything weaker is discarded.

This is self-consistency voting (several samples, agreement as confidence)
reduced to what the rule protects: the evidence's best region is the
default, and disagreement leaves it standing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from fixbugs.localize.regions import Region

__all__ = ["TIE", "Judged", "Place", "Settled", "overrules", "same_place", "settle"]

TIE = 0.95  # a region within 5% of the best evidence score counts as equally supported


@dataclass(frozen=True, slots=True)
class Judged:
    """One judgment, checked: its region and explanation, or why it was rejected."""

    region: Region | None
    explanation: str
    rejected: str | None


@dataclass(frozen=True, slots=True)
class Settled:
    """The judgment that stands (None: the evidence's best region stands) and the notes
    saying why, in the order they apply."""

    judged: Judged | None
    notes: tuple[str, ...]


def overrules(region: Region, best: Region) -> bool:
    """Whether choosing ``region`` goes against stronger evidence than its own."""
    return region.score < best.score * TIE


class Place(Protocol):
    """A region, or a root cause: where in the code."""

    @property
    def path(self) -> str: ...
    @property
    def function(self) -> str | None: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


def same_place(a: Place, b: Place) -> bool:
    """Two answers name the same place: one file and function, overlapping lines."""
    return a.path == b.path and a.function == b.function and a.start <= b.end and b.start <= a.end


def _at(r: Region) -> str:
    return f"{r.path}:{r.start}-{r.end}"


def settle(judged: Sequence[Judged], regions: Sequence[Region], *, may_overrule: bool) -> Settled:
    """The judgment that stands among ``judged`` (the first is the one the person saw;
    ``regions`` the listed ones, the evidence's best first).

    None valid: the evidence stands. Otherwise the first valid judgment:

    * ``may_overrule`` (trust high, a quorum asked): it stands at the
      evidence's best place; elsewhere (a tied region, a weaker one, or one
      not listed) only when every judgment asked is valid and names that
      place; if not, a valid judgment at the evidence's best place stands,
      or else the evidence;
    * otherwise (trust low, one judgment): it stands when the evidence
      supports its region (``overrules`` is false: the judge breaks ties).
    """
    best = regions[0]
    notes = [f"{j.rejected}; discarded" for j in judged if j.region is None and j.rejected]
    valid = [j for j in judged if j.region is not None]
    if not valid:
        return Settled(None, tuple(notes))
    first = valid[0]
    assert first.region is not None
    listed = "" if first.region in regions else ", not listed"
    chose = f"{_at(first.region)} (evidence {first.region.score:.2f}{listed})"
    against = (
        f"over stronger evidence ({_at(best)}, {best.score:.2f})"
        if overrules(first.region, best)
        else f"tied with the evidence's best ({_at(best)}, {best.score:.2f})"
    )
    if not may_overrule:
        if not overrules(first.region, best):
            return Settled(first, tuple(notes))
        notes.append(f"the judgment chose {chose} {against}; discarded")
        return Settled(None, tuple(notes))
    if same_place(first.region, best):
        return Settled(first, tuple(notes))
    if len(valid) == len(judged) and all(
        j.region is not None and same_place(first.region, j.region) for j in valid[1:]
    ):
        agreed = f"all {len(judged)} judgments" if len(judged) > 1 else "the judgment"
        notes.append(f"{agreed} (trust high) chose {chose} {against}; kept")
        return Settled(first, tuple(notes))
    others = ", ".join(_at(j.region) for j in valid[1:] if j.region is not None) or "none"
    notes.append(
        f"the judgment (trust high) chose {chose} {against}, but the {len(judged)} "
        f"judgments asked did not agree on it (the others: {others}, "
        f"{len(judged) - len(valid)} invalid); leaving the evidence's best needs them all: "
        "not kept"
    )
    at_best = next((j for j in valid if j.region and same_place(j.region, best)), None)
    return Settled(at_best, tuple(notes))
