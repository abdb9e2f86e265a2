"""The whole agent on the bundled example, with the shipped fake model.

The fake model answers instantly with schema-shaped filler, so what is
tested here is the agent's own logic: ranking, reproduction in the sandbox,
fix search limited to the localized region, and validation that refuses to
claim what it did not prove.
"""

import hashlib
import shutil
from pathlib import Path

import pytest
from userpython import user_python

from agentrt.llm import FakeModel
from fixbugs.examples import example_dir
from fixbugs.inputs import load_inputs
from fixbugs.pyenv.userenv import Interpreter
from fixbugs.run.agent import env_for_interpreter, run_bug
from fixbugs.run.context import AgentOptions, Models
from fixbugs.run.driver import STAGES
from fixbugs.run.model_steps import ALL_STEPS
from fixbugs.run.progress import HypothesisData, collecting_sink

pytestmark = pytest.mark.needs_root

# The example's tests need only the standard library: any interpreter does, so the
# test names the suite's user Python (tests/kit/userpython.py: pytest alone).
PY = env_for_interpreter(Interpreter(user_python(), "--python"))
ENV = PY.command_env()


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(root)).encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture
def example(tmp_path: Path) -> Path:
    dst = tmp_path / "invoice"
    shutil.copytree(example_dir("invoice"), dst)
    return dst


def _inputs(ex: Path, test: str | None = None):
    return load_inputs(
        ex / "report.md",
        ex / "repo",
        logs=sorted((ex / "logs").iterdir()),
        traces=sorted((ex / "traces").iterdir()),
        test=test,
    )


async def test_bundled_example_is_localized_reproduced_and_fixed(example: Path):
    before = _digest(example / "repo")
    sink, events = collecting_sink()
    models = Models(map=FakeModel(), judge=FakeModel())
    report = await run_bug(
        _inputs(example),
        models=models,
        options=AgentOptions(test_env=ENV, python=PY, model_steps=ALL_STEPS),
        sink=sink,
    )
    d = report.to_dict()
    assert d["ranked_files"][0]["path"] == "shop/pricing.py"
    assert d["reproduction"]["confirmed"] and d["reproduction"]["origin"] == "report"
    assert d["validated"] is True
    assert d["patch"].startswith("--- a/shop/pricing.py")
    assert set(d["stages"]) == set(STAGES)
    kinds = [e.kind for e in events]
    # the first hypothesis comes before any stage after analysis has even started
    assert kinds.index("hypothesis") < kinds.index("reproduction")
    hyp = events[kinds.index("hypothesis")]
    assert isinstance(hyp.data, HypothesisData) and hyp.data.path == "shop/pricing.py"
    assert d["first_hypothesis_s"] == hyp.at_s
    # the user's repository is never modified
    assert _digest(example / "repo") == before


async def test_validation_rejects_regressions_stray_edits_and_test_edits(example: Path):
    from agentrt import SystemClock
    from fixbugs.diffs import make_diff
    from fixbugs.repair.ranking import RepairCandidate
    from fixbugs.run.context import RunContext
    from fixbugs.run.progress import Journal
    from fixbugs.run.record import Analysis, BugRun, Diagnosis, RootCause, Sbfl
    from fixbugs.sandbox import Sandbox
    from fixbugs.stages.reproduce import reproduce
    from fixbugs.stages.validate import validate_candidates

    repo = example / "repo"
    inputs = _inputs(example)
    ctx = RunContext.create(
        inputs.repo,
        models=None,
        options=AgentOptions(test_env=ENV, python=PY, model_steps=ALL_STEPS),
        journal=Journal(SystemClock(), lambda _: None),
    )
    sandbox = Sandbox.create(repo, readonly_paths=PY.readonly_paths())
    try:
        reproduction = await reproduce(inputs, Analysis(), ctx, sandbox)
        assert reproduction.confirmed and len(reproduction.baseline) == 5
        prior = BugRun(
            started=0.0,
            reproduction=reproduction,
            diagnosis=Diagnosis(
                root_cause=RootCause("shop/pricing.py", 19, 20, "threshold check", "static")
            ),
            # RATES: localized, but shared
            sbfl=Sbfl(suspicious={"shop/tax.py": ((5, 5, 0.5),)}),
        )
        src = (repo / "shop/pricing.py").read_text()
        tax = (repo / "shop/tax.py").read_text()
        cur = (repo / "shop/currency.py").read_text()
        test = (repo / "tests/test_pricing.py").read_text()

        ids = iter(range(100))

        def cand(path: str, old: str, new: str, text: str, why: str) -> RepairCandidate:
            diff = make_diff(path, text, text.replace(old, new))
            return RepairCandidate.from_diff(next(ids), diff, "test", why)

        candidates = [
            # fixes the reproduction, breaks the tests below and above the threshold
            cand("shop/pricing.py", "if quantity > BULK", "if not quantity > BULK", src, "negate"),
            # edits code far from the root cause
            cand("shop/currency.py", '"1.08"', '"1.09"', cur, "stray"),
            # "fixes" the bug by editing the test
            cand(
                "tests/test_pricing.py",
                '10), Decimal("45.00")',
                '10), Decimal("50.00")',
                test,
                "test edit",
            ),
            # fixes the bug, keeps its test file green, breaks a test in another file
            RepairCandidate.from_diff(
                next(ids),
                cand("shop/pricing.py", "if quantity > BULK", "if quantity >= BULK", src, "").diff
                + cand("shop/tax.py", '"0.19"', '"0.18"', tax, "").diff,
                "test",
                "shared",
            ),
            cand("shop/pricing.py", "if quantity > BULK", "if quantity >= BULK", src, "right"),
        ]
        v = await validate_candidates(prior, ctx, sandbox, candidates)
    finally:
        sandbox.close()
    # the lead as judged (its failed checks, none, and its change's size)
    assert v.validated and v.candidate is not None and v.candidate.id == candidates[4].id
    assert v.candidate.diff == candidates[4].diff and v.candidate.change_nodes is not None
    negate, stray, test_edit, shared = v.rejected
    assert negate.startswith("negate:") and "previously passing" in negate
    assert stray.startswith("stray:") and "outside the localized region" in stray
    assert test_edit.startswith("test edit:") and "edits a test file" in test_edit
    assert shared.startswith("shared:") and "elsewhere in the suite" in shared
    assert v.tried == 3  # out-of-scope candidates are never even run


async def test_no_reproduction_means_no_validated_fix(example: Path):
    models = Models(map=FakeModel(), judge=FakeModel())
    passing = "python -m unittest tests.test_cart"
    report = await run_bug(
        _inputs(example, passing),
        models=models,
        options=AgentOptions(test_env=ENV, python=PY, model_steps=ALL_STEPS),
    )
    d = report.to_dict()
    assert d["reproduction"]["confirmed"] is False
    assert d["validated"] is False and d["patch"] is None
    assert "no validated fix" in d["validation"]["summary"]
    assert "No validated fix" in report.markdown()
