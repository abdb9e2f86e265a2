"""The model's rewrite under the judge's trust: where it may edit, and where it ranks.

Low trust (the embedded model) keeps today's guard: a rewrite outside the
root cause is dropped, and the rewrite ranks by its score. High trust (a
configured endpoint): the rewrite must touch the root cause, may edit other
hunks and files of the repository (never a test file), and leads the
candidates. A fake model answers on a FakeClock; nothing runs the tests.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentrt import FakeClock, Trust
from agentrt.llm import FakeModel
from agentrt.sim import ResponderInput
from fixbugs.diffs import Hunk, make_diff
from fixbugs.examples import example_dir
from fixbugs.inputs import BugInputs, load_inputs
from fixbugs.repair import RepairCandidate
from fixbugs.run.context import AgentOptions, Models, RunContext
from fixbugs.run.model_steps import ALL_STEPS
from fixbugs.run.progress import Journal
from fixbugs.run.record import BugRun, Diagnosis, Reproduction, RootCause
from fixbugs.stages import fix
from fixbugs.stages.model_scope import model_first, rewrite_refusal, rewrite_roots
from fixbugs.stages.validate import validate_candidates

TEST = "python -m pytest tests/test_pricing.py"
# the failing run's traceback points at line 19: the engine's edits there outrank 0.7
TAIL = (
    "Traceback (most recent call last):\n"
    '  File "shop/pricing.py", line 19, in line_total\n'
    "    if quantity > BULK_THRESHOLD:\n"
    "AssertionError: assert Decimal('50.00') == Decimal('45.00')\n"
)
ROOT = ("shop/pricing.py", 19, 20)
LISTED = {"shop/pricing.py": "", "shop/tax.py": "", "tests/test_pricing.py": ""}


def _inputs(tmp_path: Path) -> BugInputs:
    dst = tmp_path / "invoice"
    shutil.copytree(example_dir("invoice"), dst)
    return load_inputs(dst / "report.md", dst / "repo")


def _answer(start: int, end: int, replacement: str) -> str:
    """The model's rewrite of lines ``start``-``end`` as a search/replace block."""
    text = (example_dir("invoice") / "repo" / "shop" / "pricing.py").read_text()
    old = "\n".join(text.splitlines()[start - 1 : end])
    return f"shop/pricing.py\n<<<<<<< SEARCH\n{old}\n=======\n{replacement}\n>>>>>>> REPLACE\n"


def _ctx(inputs: BugInputs, clock: FakeClock, answer: str, trust: Trust) -> RunContext:
    def respond(_: ResponderInput) -> str:
        return answer

    model = FakeModel(responder=respond, clock=clock)
    return RunContext.create(
        inputs.repo,
        models=Models(map=model, judge=model, judge_trust=trust),
        options=AgentOptions(model_steps=ALL_STEPS),
        journal=Journal(clock, lambda _ev: None),
    )


def _prior() -> BugRun:
    rc = RootCause(*ROOT, "bulk threshold off by one", "static")
    repro = Reproduction(TEST, "given", "confirmed", "1 failed", output_tail=TAIL)
    return BugRun(started=0.0, reproduction=repro, diagnosis=Diagnosis(root_cause=rc))


async def _propose(
    tmp_path: Path, answer: str, trust: Trust
) -> tuple[list[RepairCandidate], RunContext]:
    clock = FakeClock()
    inputs = _inputs(tmp_path / trust)
    ctx = _ctx(inputs, clock, answer, trust)
    async with clock.autojumping():
        cands = await fix.propose_fixes(inputs, _prior(), ctx)
    return cands, ctx


async def test_a_high_trust_rewrite_leads_the_candidates_a_low_one_ranks_by_score(
    tmp_path: Path,
) -> None:
    answer = _answer(19, 19, "    if quantity >= BULK_THRESHOLD:")
    low, _ = await _propose(tmp_path, answer, "low")
    high, _ = await _propose(tmp_path, answer, "high")
    model_low = next(i for i, c in enumerate(low) if c.template == "model")
    assert model_low > 0 and low[0].score > low[model_low].score  # stronger templates first
    assert high[0].template == "model" and ">= BULK_THRESHOLD" in high[0].diff
    # the rest keep the ranking's order
    assert [c.id for c in high[1:]] == [c.id for c in low if c.template != "model"]


async def test_a_rewrite_reaching_past_the_root_cause_is_dropped_on_low_and_kept_on_high(
    tmp_path: Path,
) -> None:
    text = (example_dir("invoice") / "repo" / "shop" / "pricing.py").read_text()
    lines = text.splitlines()[8:19]  # lines 9-19: the constant, and the comparison
    lines[0] = "BULK_THRESHOLD = 9"
    lines[10] = "    if quantity >= BULK_THRESHOLD:"
    answer = _answer(9, 19, "\n".join(lines))
    low, low_ctx = await _propose(tmp_path, answer, "low")
    high, _ = await _propose(tmp_path, answer, "high")
    assert not any(c.template == "model" for c in low)
    assert any("outside the root cause" in n and "dropped" in n for n in low_ctx.journal.notes)
    lead = high[0]
    assert lead.template == "model" and "+BULK_THRESHOLD = 9" in lead.diff
    assert "+    if quantity >= BULK_THRESHOLD:" in lead.diff  # two hunks, one at the root


async def test_a_high_trust_rewrite_that_misses_the_root_cause_is_dropped(
    tmp_path: Path,
) -> None:
    answer = _answer(9, 9, "BULK_THRESHOLD = 9")
    high, ctx = await _propose(tmp_path, answer, "high")
    assert not any(c.template == "model" for c in high)
    assert any("does not rewrite the root cause" in n for n in ctx.journal.notes)


def test_high_trust_lets_a_rewrite_edit_several_hunks_and_files_never_a_test() -> None:
    several = [Hunk("shop/pricing.py", 19, 19), Hunk("shop/pricing.py", 9, 9)]
    other_file = [Hunk("shop/pricing.py", 20, 20), Hunk("shop/tax.py", 3, 4)]
    for hunks in (several, other_file):
        assert rewrite_refusal(hunks, [ROOT], "high", LISTED, 3) is None
        assert "outside the root cause" in (rewrite_refusal(hunks, [ROOT], "low", LISTED, 3) or "")
    assert rewrite_refusal([Hunk("shop/pricing.py", 18, 21)], [ROOT], "low", LISTED, 3) is None
    with_test = [*several, Hunk("tests/test_pricing.py", 5, 5)]
    assert "test file" in (rewrite_refusal(with_test, [ROOT], "high", LISTED, 3) or "")
    unknown = [*several, Hunk("shop/nowhere.py", 1, 1)]
    assert "does not have" in (rewrite_refusal(unknown, [ROOT], "high", LISTED, 3) or "")
    away = [Hunk("shop/tax.py", 3, 4)]
    assert "does not rewrite" in (rewrite_refusal(away, [ROOT], "high", LISTED, 3) or "")
    assert rewrite_refusal([], [ROOT], "high", LISTED, 3) == "it changes nothing"


def _cand(id: int, template: str, risk: str = "low") -> RepairCandidate:
    return RepairCandidate(
        id,
        "shop/pricing.py",
        "",
        "",
        template,
        "",
        19,
        19,
        1.0,
        0.5,
        1.0,
        1,
        risk,  # type: ignore[arg-type]
    )


def test_only_a_rewrite_without_high_risk_is_moved_first() -> None:
    ranked = [_cand(1, "condition"), _cand(2, "model"), _cand(3, "operator")]
    assert [c.id for c in model_first(ranked, "high")] == [2, 1, 3]
    assert [c.id for c in model_first(ranked, "low")] == [1, 2, 3]
    risky = [_cand(1, "condition"), _cand(2, "model", "high")]
    assert [c.id for c in model_first(risky, "high")] == [1, 2]


@pytest.mark.parametrize(
    ("trust", "why"),
    [("low", "outside the localized region"), ("high", "does not rewrite the root cause")],
)
async def test_validation_applies_the_same_rule_to_a_model_diff(
    tmp_path: Path, trust: Trust, why: str
) -> None:
    inputs = _inputs(tmp_path)
    ctx = _ctx(inputs, FakeClock(), "", trust)
    tax = ctx.files()["shop/tax.py"]
    diff = make_diff("shop/tax.py", tax, tax.replace('"0.19"', '"0.18"'))
    cand = RepairCandidate.from_diff(0, diff, "model", "model rewrite of shop/tax.py")
    v = await validate_candidates(_prior(), ctx, None, [cand])  # type: ignore[arg-type]
    assert not v.validated and v.tried == 0
    assert len(v.rejected) == 1 and why in v.rejected[0]


async def test_a_judge_that_overruled_the_evidence_leaves_the_evidence_its_lead(
    tmp_path: Path,
) -> None:
    # the judge (origin model) put the root cause at line 9; the evidence's best region is
    # the comparison at 19-20: a rewrite there still stands, and its region still leads
    from fixbugs.localize.regions import Region

    judged = RootCause("shop/pricing.py", 9, 9, "the constant", "model")
    best = Region("shop/pricing.py", "line_total", *ROOT[1:], 5.0, ("traceback",))
    repro = Reproduction(TEST, "given", "confirmed", "1 failed", output_tail=TAIL)
    prior = BugRun(
        started=0.0,
        reproduction=repro,
        diagnosis=Diagnosis(regions=(best,), root_cause=judged),
    )
    assert rewrite_roots(prior) == [("shop/pricing.py", 9, 9), ROOT]
    listed = {"shop/pricing.py": ""}
    assert [(p, a, b, s) for p, a, b, s in fix.repair_regions(prior, listed)][:2] == [
        ("shop/pricing.py", 9, 9, 1.0),
        (*ROOT, 1.0),
    ]
    at_best = [Hunk("shop/pricing.py", 19, 19)]
    assert rewrite_refusal(at_best, rewrite_roots(prior), "high", LISTED, 0) is None
    judged_only = [(judged.path, judged.start, judged.end)]
    refused = rewrite_refusal(at_best, judged_only, "high", LISTED, 0) or ""
    assert "does not rewrite" in refused
    # a root cause the evidence chose has nothing to add
    static_rc = RootCause(*ROOT, "x", "static")
    static = BugRun(
        started=0.0, reproduction=repro, diagnosis=Diagnosis(regions=(best,), root_cause=static_rc)
    )
    assert rewrite_roots(static) == [ROOT]
