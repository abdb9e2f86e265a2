"""The root cause a validated fix confirms (:mod:`fixbugs.stages.confirm`).

A judge that named the wrong listed region, while the fix that validated
changes another listed region: the report's root cause is the fix's region,
with a note. A fix inside the chosen root cause, or outside every region,
leaves the diagnosis as it was. With no validated fix, a judgment off the
evidence's best region gives way to it where candidates ran.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fixbugs.diffs import make_diff
from fixbugs.examples import example_dir
from fixbugs.inputs import BugInputs, load_inputs
from fixbugs.localize.regions import Region
from fixbugs.repair import RepairCandidate
from fixbugs.repair.verdict import VerdictLevel
from fixbugs.run.record import BugRun, Diagnosis, RootCause, Validation
from fixbugs.stages.confirm import confirmed_diagnosis

PRICING = "shop/pricing.py"
RIGHT = Region(PRICING, "line_total", 19, 20, 0.9, ("covered by the failing test",))
WRONG = Region("shop/tax.py", "tax_for", 5, 9, 0.4, ("defines a name used in the report",))
ELSEWHERE = Region(PRICING, "order_subtotal", 24, 26, 0.2, ("near the traceback",))


def _inputs(tmp_path: Path) -> BugInputs:
    dst = tmp_path / "invoice"
    shutil.copytree(example_dir("invoice"), dst)
    return load_inputs(dst / "report.md", dst / "repo")


def _fix(old: str, new: str) -> RepairCandidate:
    text = (example_dir("invoice") / "repo" / PRICING).read_text()
    assert old in text
    return RepairCandidate.from_diff(1, make_diff(PRICING, text, text.replace(old, new)), "t", "")


def _run(chosen: Region, regions: tuple[Region, ...]) -> BugRun:
    rc = RootCause(
        chosen.path, chosen.start, chosen.end, "the judge's reason", "model", (), chosen.function
    )
    return BugRun(started=0.0, diagnosis=Diagnosis(regions=regions, root_cause=rc))


THRESHOLD = _fix("if quantity > BULK_THRESHOLD:", "if quantity >= BULK_THRESHOLD:")


def test_a_fix_in_another_listed_region_moves_the_root_cause_there(tmp_path: Path) -> None:
    prior = _run(WRONG, (RIGHT, WRONG))
    validation = Validation(VerdictLevel.VALIDATED, THRESHOLD, 1, "validated")
    diagnosis, note = confirmed_diagnosis(_inputs(tmp_path), prior, validation)
    assert diagnosis is not None and diagnosis.root_cause is not None
    rc = diagnosis.root_cause
    assert (rc.path, rc.start, rc.end, rc.function) == (PRICING, 19, 20, "line_total")
    assert rc.origin == "static"  # the region's own evidence, no SBFL in this run
    assert "shop/tax.py (lines 5-9, chosen by model)" in rc.explanation
    assert note is not None
    assert note.startswith(f"the validated fix changes {PRICING} (lines 19-20)")
    assert diagnosis.regions == (RIGHT, WRONG)  # the regions are not re-ranked


@pytest.mark.parametrize(
    ("chosen", "regions", "validated"),
    [
        (RIGHT, (WRONG, RIGHT), True),  # the fix touches the chosen root cause
        (WRONG, (WRONG, ELSEWHERE), True),  # the fix is in no listed region
        (RIGHT, (RIGHT, WRONG), False),  # nothing validated, the judge at the evidence's best
    ],
    ids=["fix-in-root-cause", "fix-in-no-region", "not-validated-at-best"],
)
def test_the_diagnosis_stands(
    tmp_path: Path, chosen: Region, regions: tuple[Region, ...], validated: bool
) -> None:
    prior = _run(chosen, regions)
    validation = Validation(
        VerdictLevel.VALIDATED if validated else VerdictLevel.NO_FIX,
        THRESHOLD if validated else None,
        1,
        "",
    )
    assert confirmed_diagnosis(_inputs(tmp_path), prior, validation) == (prior.diagnosis, None)


def test_an_unconfirmed_judgment_off_the_evidence_best_gives_way_to_it(tmp_path: Path) -> None:
    prior = _run(WRONG, (RIGHT, WRONG))
    diagnosis, note = confirmed_diagnosis(
        _inputs(tmp_path), prior, Validation(VerdictLevel.NO_FIX, None, 12, "no validated fix")
    )
    assert diagnosis is not None and diagnosis.root_cause is not None
    rc = diagnosis.root_cause
    assert (rc.path, rc.start, rc.end, rc.function) == (PRICING, 19, 20, "line_total")
    assert rc.origin == "static"
    assert "The judgment named shop/tax.py (lines 5-9, chosen by model)" in rc.explanation
    assert note is not None and "no validated fix confirmed the judgment's root cause" in note
    assert diagnosis.regions == (RIGHT, WRONG)


def test_where_nothing_ran_or_the_evidence_chose_the_root_cause_stands(tmp_path: Path) -> None:
    inputs = _inputs(tmp_path)
    judged = _run(WRONG, (RIGHT, WRONG))  # not reproduced: no candidate could run
    assert confirmed_diagnosis(inputs, judged, Validation(VerdictLevel.NO_FIX, None, 0, "")) == (
        judged.diagnosis,
        None,
    )
    assert judged.diagnosis is not None
    evidence = judged.model_copy(
        update={
            "diagnosis": judged.diagnosis.model_copy(
                update={"root_cause": RootCause(PRICING, 24, 26, "why", "static")}
            )
        }
    )
    assert confirmed_diagnosis(inputs, evidence, Validation(VerdictLevel.NO_FIX, None, 5, "")) == (
        evidence.diagnosis,
        None,
    )


def test_a_pure_insertion_beside_the_region_touches_it(tmp_path: Path) -> None:
    # inserted after line 20 (the hunk's old range is empty, between 20 and 21)
    line = "        total -= total * BULK_DISCOUNT\n"
    fix = _fix(line, line + "        pass\n")
    prior = _run(WRONG, (RIGHT, WRONG))
    diagnosis, note = confirmed_diagnosis(
        _inputs(tmp_path), prior, Validation(VerdictLevel.VALIDATED, fix, 1, "")
    )
    assert note is not None
    assert diagnosis is not None and diagnosis.root_cause is not None
    assert diagnosis.root_cause.start == 19
