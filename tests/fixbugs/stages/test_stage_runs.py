"""Each stage's ``run`` called on its own: no root, no agent, no sandbox (issue 46).

A stage is a typed function of its inputs and the run's services: the
tests below build each stage's input by hand (the record's typed
``with_*`` methods, as the agent does) and call the stage directly, on the
bundled example bug (a bulk discount that starts at 11 units instead of
10, ``shop/pricing.py``). Code runs in
:class:`~fixbugs.sandbox.testing.PlainWorkspace` (plain subprocesses in a
copy), so the whole file runs as any user. What each test checks is the
stage's contract, not the agent's: the analysis ranks from the report, the
reproduction confirms the report's test, the root cause and the fix name
the faulty lines, the validation checks a candidate and says so.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from userpython import user_python

from agentrt import FakeClock
from agentrt.llm import FakeModel
from fixbugs.examples import example_dir
from fixbugs.inputs import BugInputs, load_inputs
from fixbugs.pyenv.userenv import Interpreter
from fixbugs.run.agent import env_for_interpreter
from fixbugs.run.context import AgentOptions, Models, RunContext
from fixbugs.run.progress import Journal, ProgressEvent
from fixbugs.run.record import BugRun
from fixbugs.sandbox.testing import PlainWorkspace
from fixbugs.stages.analysis import run_analysis
from fixbugs.stages.file_relevance import run_relevance
from fixbugs.stages.fix import run_fix
from fixbugs.stages.reproduce import run_reproduction
from fixbugs.stages.rootcause import run_root_cause
from fixbugs.stages.validate import run_validation

FAULT = "shop/pricing.py"
_OPTIONS: list[AgentOptions] = []


def _options() -> AgentOptions:
    # the example's tests need only the standard library: this interpreter runs them
    if not _OPTIONS:
        env = env_for_interpreter(Interpreter(user_python(), "--python"))
        _OPTIONS.append(replace(AgentOptions.for_env(env), max_candidates=40))
    return _OPTIONS[0]


@pytest.fixture
def inputs(tmp_path: Path) -> BugInputs:
    dst = tmp_path / "invoice"
    shutil.copytree(example_dir("invoice"), dst)
    return load_inputs(dst / "report.md", dst / "repo", logs=sorted((dst / "logs").iterdir()))


def _ctx(inputs: BugInputs, models: Models | None = None) -> tuple[RunContext, list[ProgressEvent]]:
    events: list[ProgressEvent] = []
    journal = Journal(FakeClock(), events.append)
    ctx = RunContext.create(inputs.repo, models=models, options=_options(), journal=journal)
    return ctx, events


def _workspace(inputs: BugInputs, ran: list[str]) -> PlainWorkspace:
    return PlainWorkspace.create(inputs.repo.root, commands=ran)


async def test_analysis_ranks_the_faulty_file_from_the_report_alone(inputs: BugInputs) -> None:
    ctx, events = _ctx(inputs)
    analysis = await run_analysis(inputs, ctx)
    assert analysis.ranked and analysis.ranked[0].path == FAULT
    assert analysis.failure is not None and analysis.failure.exception_type == "AssertionError"
    assert any(ev.kind == "ranked_files" for ev in events)


async def test_relevance_asks_nothing_without_a_model_and_answers_in_the_trees_files(
    inputs: BugInputs,
) -> None:
    ctx, _ = _ctx(inputs)
    analysis = await run_analysis(inputs, ctx)
    assert await run_relevance(inputs, analysis, ctx) == ()
    with_model, _ = _ctx(inputs, Models(map=FakeModel(), judge=FakeModel()))
    found = await run_relevance(inputs, analysis, with_model)
    assert all(f.path in with_model.files() for f in found)


async def test_reproduction_root_cause_fix_and_validation_each_called_on_its_own(
    inputs: BugInputs,
) -> None:
    # one chain (each stage's run called directly, its input built with the record's
    # typed methods), so the suite pays for one analysis and one reproduction
    ctx, _ = _ctx(inputs)
    analysis = await run_analysis(inputs, ctx)
    ran: list[str] = []
    with _workspace(inputs, ran) as ws:
        rep, sbfl = await run_reproduction(inputs, analysis, ctx, ws)
    assert rep.confirmed and rep.command is not None
    assert "test_bulk_discount_at_threshold" in rep.command
    assert any("test_pricing" in c for c in ran)
    # the workspace's missing containment is in the run's notes, so the report says it
    assert any("uncontained" in n for n in ctx.journal.notes)
    # the tree the user gave is untouched: the stage ran in the copy
    assert not list(inputs.repo.root.rglob("__pycache__"))
    # test commands write no bytecode, but the reproduction's own run compiled the project
    # for the forks (before, every run kept 0 modules)
    kept = [int(m[1]) for n in ctx.journal.notes if (m := re.search(r"kept (\d+) compiled", n))]
    assert kept and kept[0] >= 1, ctx.journal.notes

    prior = BugRun(started=0.0, analysis=analysis).with_reproduction(rep, sbfl)
    diagnosis = await run_root_cause(inputs, prior, ctx)
    rc = diagnosis.root_cause
    assert rc is not None and rc.path == FAULT
    assert diagnosis.regions and diagnosis.regions[0].path == FAULT

    prior = prior.with_diagnosis(diagnosis)
    proposal = await run_fix(inputs, prior, ctx)
    assert proposal.candidates
    assert all(FAULT in c.diff for c in proposal.candidates[:3])

    prior = prior.with_fix(proposal)
    with _workspace(inputs, []) as ws:
        validation, _diagnosis = await run_validation(inputs, prior, ctx, ws)
    assert validation.tried >= 1
    lead = validation.candidate
    assert lead is not None and FAULT in lead.diff
    assert validation.level in ("validated", "passes_tests")
