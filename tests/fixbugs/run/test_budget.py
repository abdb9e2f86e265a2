"""A run's model budget (``--max-cost``), against the simulator with a price.

The bundled example runs end to end with its models served by agentrt's
in-process OpenAI-compatible simulator (real client, usage as a provider
reports it) behind the spend layer at a price. Reaching the budget ends the
model work with one note; the run goes on from the static evidence, and its
report (JSON and markdown) shows tokens in and out and dollars per stage.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from userpython import user_python

from agentrt.flow import Price, SpendingModel
from agentrt.sim import in_process_model
from fixbugs.examples import example_dir
from fixbugs.inputs import load_inputs
from fixbugs.pyenv.userenv import Interpreter
from fixbugs.run.agent import env_for_interpreter, run_bug
from fixbugs.run.context import BUDGET_REACHED, AgentOptions, Models
from fixbugs.run.model_steps import ALL_STEPS
from fixbugs.run.progress import collecting_sink
from fixbugs.run.report import RunReport

pytestmark = pytest.mark.needs_root

PY = env_for_interpreter(Interpreter(user_python(), "--python"))
PRICE = Price(input_per_mtok=3.0, output_per_mtok=15.0)
BUDGET = 0.02


async def test_the_run_stops_its_model_work_at_the_budget_and_still_reports(
    tmp_path: Path,
) -> None:
    ex = tmp_path / "invoice"
    shutil.copytree(example_dir("invoice"), ex)
    inputs = load_inputs(
        ex / "report.md", ex / "repo", logs=sorted((ex / "logs").iterdir()), test=None
    )
    sink, events = collecting_sink()
    async with in_process_model("fast") as sim:
        priced = SpendingModel(sim, price=PRICE)
        # a budget a few calls fit in: each holds its worst case while in flight, and
        # one whose worst case does not fit beside them is not started
        options = replace(AgentOptions.for_env(PY), max_cost_usd=BUDGET, model_steps=ALL_STEPS)
        report = await run_bug(
            inputs, models=Models(map=priced, judge=priced, judge_trust="high"),
            options=options, sink=sink,
        )  # fmt: skip
        served = sim.engine.stats()
    d = report.to_dict()
    cost = d["cost"]
    # the model work ended at the budget: the calls that ran are the ones charged
    assert cost["reached"] and cost["refused_calls"] >= 1 and cost["max_cost_usd"] == BUDGET
    assert cost["cost_usd"] <= BUDGET  # never over: calls in flight held their worst case
    assert sum(cost["cut"].values()) == cost["refused_calls"]  # what was cut, by stage
    model_calls = [c for c in d["calls"] if c["kind"] == "model"]
    assert 1 <= len(model_calls) == served["requests"]
    assert (cost["input_tokens"], cost["output_tokens"]) == (
        served["tokens_in"],
        served["tokens_out"],
    )
    assert cost["cost_usd"] == pytest.approx(
        (served["tokens_in"] * 3.0 + served["tokens_out"] * 15.0) / 1e6, abs=1e-6
    )
    assert set(cost["cut"]) <= {"analysis", "file_relevance", "root_cause", "fix"}
    # one line, in the notes and the progress stream; no call is reported as failed
    budget_notes = [n for n in d["notes"] if BUDGET_REACHED in n]
    assert len(budget_notes) == 1 and budget_notes[0].startswith("model budget reached")
    assert [e.message for e in events if e.kind == "note" and e.stage == "budget"] == budget_notes
    assert not any("failed" in n and "model" in n for n in d["notes"])
    assert d["degraded"] is False
    # the run went on, to a validated fix
    assert d["validated"] is True
    # tokens and dollars per stage: the stages that called the model, and the ones that did not
    spent = {n: s for n, s in d["stages"].items() if s["model_calls"]}
    assert spent and all(s["input_tokens"] > 0 and s["cost_usd"] > 0 for s in spent.values())
    assert all(s["cost_usd"] is None for n, s in d["stages"].items() if n not in spent)
    assert sum(s["cost_usd"] for s in spent.values()) == pytest.approx(cost["cost_usd"])
    # the report is written, and reads back through its schema
    out = tmp_path / "report.json"
    report.write_json(out)
    again = RunReport.from_dict(json.loads(out.read_text()))
    assert again.model.cost is not None and again.model.cost.reached == cost["reached"]
    md = report.markdown()
    assert "| in tok | out tok | cost $ |" in md and "Budget reached" in md
    stage, n = sorted(cost["cut"].items())[0]
    assert f"call(s) not started: {stage} {n}" in md
