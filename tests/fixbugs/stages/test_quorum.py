"""The quorum rule: which of several checked judgments stands (pure, no model)."""

from __future__ import annotations

from fixbugs.localize.regions import Region
from fixbugs.stages.quorum import Judged, settle

BEST = Region("pkg/a.py", "f", 10, 14, 1.0, ("deepest project frame",))
TIED = Region("pkg/a.py", "g", 20, 24, 0.96, ("SBFL",))
WEAK = Region("pkg/b.py", "h", 5, 9, 0.4, ("BM25 against the report",))
UNLISTED = Region("pkg/c.py", "k", 30, 31, 0.0, ("named by the judge, not listed",))
REGIONS = (BEST, TIED, WEAK)


def _j(region: Region | None, why: str | None = None) -> Judged:
    return Judged(region, "because" if region else "", why)


def test_no_valid_judgment_leaves_the_evidence_with_each_reason() -> None:
    s = settle([_j(None, "named no region"), _j(None, "too short")], REGIONS, may_overrule=True)
    assert s.judged is None
    assert s.notes == ("named no region; discarded", "too short; discarded")


def test_a_judgment_at_the_evidence_best_place_stands_alone() -> None:
    s = settle([_j(BEST), _j(WEAK)], REGIONS, may_overrule=True)
    assert s.judged is not None and s.judged.region is BEST and not s.notes


def test_on_trust_high_a_tied_region_takes_the_quorum_too() -> None:
    s = settle([_j(TIED), _j(TIED)], REGIONS, may_overrule=True)
    assert s.judged is not None and s.judged.region is TIED
    assert "tied with the evidence's best (pkg/a.py:10-14" in s.notes[-1]
    s = settle([_j(TIED), _j(WEAK)], REGIONS, may_overrule=True)
    assert s.judged is None and "did not agree" in s.notes[-1]


def test_on_trust_low_the_single_judgment_breaks_ties() -> None:
    s = settle([_j(TIED)], REGIONS, may_overrule=False)
    assert s.judged is not None and s.judged.region is TIED


def test_an_overrule_stands_when_every_judgment_names_that_place() -> None:
    same = Region("pkg/b.py", "h", 7, 8, 0.4, ())  # overlapping lines of the same function
    s = settle([_j(WEAK), _j(same)], REGIONS, may_overrule=True)
    assert s.judged is not None and s.judged.region is WEAK
    assert "all 2 judgments (trust high) chose pkg/b.py:5-9" in s.notes[-1]
    s = settle([_j(UNLISTED), _j(UNLISTED)], REGIONS, may_overrule=True)
    assert s.judged is not None and s.judged.region is UNLISTED
    assert "not listed) over stronger evidence" in s.notes[-1]


def test_a_disagreed_overrule_gives_way_to_a_judgment_at_the_best_place_or_the_evidence() -> None:
    s = settle([_j(WEAK), _j(BEST)], REGIONS, may_overrule=True)
    assert s.judged is not None and s.judged.region is BEST
    assert "did not agree" in s.notes[-1] and "others: pkg/a.py:10-14" in s.notes[-1]
    s = settle([_j(WEAK), _j(TIED)], REGIONS, may_overrule=True)
    assert s.judged is None
    s = settle([_j(WEAK), _j(UNLISTED)], REGIONS, may_overrule=True)
    assert s.judged is None and "not kept" in s.notes[-1]


def test_an_overrule_with_an_invalid_judgment_beside_it_is_not_kept() -> None:
    s = settle([_j(WEAK), _j(None, "malformed")], REGIONS, may_overrule=True)
    assert s.judged is None
    assert s.notes[0] == "malformed; discarded"
    assert "1 invalid" in s.notes[-1] and "not kept" in s.notes[-1]


def test_without_leave_to_overrule_any_overrule_is_discarded() -> None:
    s = settle([_j(WEAK)], REGIONS, may_overrule=False)
    assert s.judged is None
    assert "over stronger evidence" in s.notes[-1] and s.notes[-1].endswith("discarded")
