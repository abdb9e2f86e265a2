"""The fix stage generates no candidate that nothing could validate (issue 24).

Seen: on a bug that was not reproduced, the fix stage spent minutes on 300
candidates that validation then refused to run. Here the candidate
generator is counted: a run without a reproduction that validation can
rerun never calls it and says why in the report; a reproduced run still does.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentrt import FakeClock
from fixbugs.examples import example_dir
from fixbugs.inputs import BugInputs, load_inputs
from fixbugs.repair import RepairCandidate
from fixbugs.run.context import AgentOptions, RunContext
from fixbugs.run.driver import complete_report
from fixbugs.run.progress import Journal
from fixbugs.run.record import BugRun, Diagnosis, Reproduction, RootCause
from fixbugs.stages import fix, sources
from fixbugs.stages.validate import validate_candidates

TEST = "python -m pytest tests/test_pricing.py"


def _inputs(tmp_path: Path) -> BugInputs:
    dst = tmp_path / "invoice"
    shutil.copytree(example_dir("invoice"), dst)
    return load_inputs(dst / "report.md", dst / "repo")


def _ctx(inputs: BugInputs) -> RunContext:
    journal = Journal(FakeClock(), lambda _ev: None)
    return RunContext.create(inputs.repo, models=None, options=AgentOptions(), journal=journal)


def _prior(repro: Reproduction | None) -> BugRun:
    # the example's real fault: `>` where the policy says "10 or more"
    rc = RootCause("shop/pricing.py", 19, 20, "bulk threshold off by one", "static")
    return BugRun(started=0.0, reproduction=repro, diagnosis=Diagnosis(root_cause=rc))


@pytest.fixture
def generated(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the candidate generator's calls (and how many candidates each returned)."""
    calls: list[int] = []
    real = fix.generate_candidates

    def counted(*args: object, **kw: object) -> list[RepairCandidate]:
        out = real(*args, **kw)  # type: ignore[arg-type]
        calls.append(len(out))
        return out

    monkeypatch.setattr(fix, "generate_candidates", counted)
    return calls


@pytest.mark.parametrize(
    "repro",
    [
        None,
        Reproduction(TEST, "given", "could_not_run", "collection error"),
        Reproduction(TEST, "discovered", "passes", "the tests pass"),
        Reproduction(None, "none", "none", "no test command"),
    ],
    ids=["not-run", "could-not-run", "passes", "no-command"],
)
async def test_a_run_not_reproduced_generates_no_candidate_and_says_why(
    tmp_path: Path, generated: list[int], repro: Reproduction | None
) -> None:
    inputs = _inputs(tmp_path)
    ctx = _ctx(inputs)
    prior = _prior(repro)
    proposal = await fix.run_fix(inputs, prior, ctx)
    assert generated == []  # the generator never ran
    assert proposal.candidates == ()
    assert ctx.journal.notes == [fix.NOT_REPRODUCED]
    # the report says why, and its verdict stays "no validated fix"
    run = prior.model_copy(update={"fix": proposal})
    validation = await validate_candidates(run, ctx, None, proposal.candidates)  # type: ignore[arg-type]
    run = run.model_copy(update={"validation": validation})
    report = complete_report(inputs, run, ctx, ()).to_dict()
    assert fix.NOT_REPRODUCED in report["notes"]
    assert report["validated"] is False and report["patch"] is None
    assert report["validation"]["summary"] == "no validated fix: the bug was not reproduced"


@pytest.mark.parametrize("origin", ["given", "report", "written", "discovered"])
async def test_a_reproduced_run_still_generates_candidates(
    tmp_path: Path, generated: list[int], origin: str
) -> None:
    inputs = _inputs(tmp_path)
    ctx = _ctx(inputs)
    repro = Reproduction(TEST, origin, "confirmed", "1 failed")  # type: ignore[arg-type]
    proposal = await fix.run_fix(inputs, _prior(repro), ctx)
    assert len(generated) == 1 and generated[0] > 0
    assert proposal.candidates
    assert fix.NOT_REPRODUCED not in ctx.journal.notes


def test_can_validate_needs_a_confirmed_failure_and_its_command() -> None:
    assert sources.can_validate(Reproduction(TEST, "given", "confirmed", "1 failed"))
    assert not sources.can_validate(None)
    assert not sources.can_validate(Reproduction(None, "given", "confirmed", "1 failed"))
    assert not sources.can_validate(Reproduction(TEST, "given", "passes", "passed"))


def test_the_spectrum_top_ranges_of_all_files_join_the_repair_regions() -> None:
    from fixbugs.run.record import BugRun, Sbfl

    sbfl = Sbfl(
        suspicious={
            "pkg/driver.py": ((130, 130, 0.5), (137, 137, 1.0)),
            "pkg/main.py": ((40, 44, 0.9),),
            "tests/test_x.py": ((3, 3, 1.0),),  # a test file is never a repair region
            "pkg/gone.py": ((1, 1, 1.0),),  # nor a file the listing lacks
        }
    )
    prior = BugRun(started=0.0, sbfl=sbfl)
    listed = {"pkg/driver.py": "", "pkg/main.py": "", "tests/test_x.py": ""}
    assert fix.spectrum_top(prior, listed) == [("pkg/driver.py", 137, 137, 1.0)]
    assert fix.spectrum_top(BugRun(started=0.0), listed) == []


def test_the_failing_run_s_frames_and_a_wrapper_s_callee_join_the_repair_regions() -> None:
    from fixbugs.run.record import RootCause
    from fixbugs.stages.repair_scope import callee_regions, crash_regions

    run = "pkg/a.py:9: in outer\n    x()\n/tmp/copy/pkg/b.py:4: KeyError\ntests/t.py:3: in t\n"
    listed = {"pkg/a.py": "", "pkg/b.py": "", "tests/t.py": ""}
    # innermost first, a printed absolute path mapped to the repository's, no test file
    assert crash_regions([], listed, run) == [
        ("pkg/b.py", 2, 6, 0.9),
        ("pkg/a.py", 7, 11, 0.9 / 1.3),
    ]
    assert crash_regions([("pkg/b.py", 1, 9, 1.0)], listed, run)[0][0] == "pkg/a.py"
    text = (
        "def one(x):\n"
        "    r = many(x)\n"
        "    return r[0] if r else None\n"
        "\n"
        "def many(x):\n"
        "    return [y for y in x]\n"
    )
    wrapper = RootCause("pkg/a.py", 1, 3, "", "sbfl")
    assert callee_regions(wrapper, text, []) == [("pkg/a.py", 5, 6, 1.0)]
    assert callee_regions(wrapper, text, [("pkg/a.py", 4, 6, 1.0)]) == []


def test_a_list_of_keys_the_failing_tests_ran_joins_the_repair_regions() -> None:
    from fixbugs.localize.rank import RankedFile
    from fixbugs.repair import SourceFile
    from fixbugs.run.record import BugRun, Diagnosis, Sbfl
    from fixbugs.stages.repair_scope import key_regions

    text = (
        "def merge(info, outer):\n"
        "    for k in ('_type', 'url'):\n"
        "        outer.pop(k, None)\n"
        "    for k in ('a', 'b'):\n"
        "        info.pop(k, None)\n"
    )
    prior = BugRun(
        started=0.0,
        sbfl=Sbfl(suspicious={"pkg/m.py": ((1, 3, 1.0),)}),  # line 4 never ran
        diagnosis=Diagnosis(ranked=(RankedFile("pkg/m.py", 1.0, ()),)),
    )
    sources = [SourceFile("pkg/m.py", text)]
    assert key_regions(prior, [], sources, ("id",)) == [("pkg/m.py", 2, 2, 1.0)]
    assert key_regions(prior, [], sources, ()) == []
    assert key_regions(prior, [("pkg/m.py", 1, 5, 1.0)], sources, ("id",)) == []
    # the whole spectrum, when the record has it, beyond each file's top ranges
    spectrum = Sbfl(
        suspicious={"pkg/m.py": ((1, 1, 1.0),)},
        spectrum={"pkg/m.py": ((1, 1, 1.0), (2, 3, 0.5), (4, 5, 0.7))},
    )
    wide = prior.model_copy(update={"sbfl": spectrum})
    assert key_regions(wide, [], sources, ("id",)) == [
        ("pkg/m.py", 4, 4, 0.7),
        ("pkg/m.py", 2, 2, 0.5),
    ]


def test_the_spectrum_is_kept_whole_as_runs_of_one_score() -> None:
    from fixbugs.localize.sbfl import score_runs

    scores = {3: 0.5, 4: 0.5, 5: 1.0, 7: 1.0, 9: 0.0}
    assert score_runs(scores) == (
        (3, 4, 0.5),
        (5, 5, 1.0),
        (7, 7, 1.0),
    )  # a line no failing test ran is left out
