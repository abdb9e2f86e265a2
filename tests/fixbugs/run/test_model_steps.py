"""Model steps: a run takes only the steps it names, and says which.

The steps a low-trust endpoint is given come from measurement
(MEASUREMENTS.md, "model steps"); ``--model-steps`` picks them by hand, which
is how the measurement is made, so the choice must reach every stage.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from userpython import user_python

from agentrt.llm import FakeModel
from fixbugs.errors import InputError
from fixbugs.examples import example_dir
from fixbugs.inputs import load_inputs
from fixbugs.pyenv.userenv import Interpreter
from fixbugs.run.agent import env_for_interpreter, run_bug
from fixbugs.run.context import AgentOptions, Models
from fixbugs.run.model_steps import ALL_STEPS, MODEL_STEPS, NO_STEPS, ModelSteps
from fixbugs.sandbox.testing import PlainWorkspace

PY = env_for_interpreter(Interpreter(user_python(), "--python"))


def test_parse_names_all_none_or_a_list_and_round_trips() -> None:
    assert ModelSteps.parse("all") == ALL_STEPS
    assert ModelSteps.parse("none") == NO_STEPS
    some = ModelSteps.parse(" judgment,relevance ")
    assert some.enabled == {"judgment", "relevance"}
    assert some.describe() == "relevance, judgment"  # pipeline order
    for steps in (ALL_STEPS, NO_STEPS, some):
        assert ModelSteps.parse(steps.spec()) == steps
    assert all(ModelSteps.deadline_s(s) > 0 for s in MODEL_STEPS)


@pytest.mark.parametrize("spec", ["", "judgement", "all,none", "relevance,bogus"])
def test_a_bad_step_is_one_line_naming_the_valid_ones(spec: str) -> None:
    with pytest.raises(InputError) as exc:
        ModelSteps.parse(spec)
    assert "log_map, relevance, reproduce, judgment, rewrite, naturalness" in str(exc.value)
    assert "\n" not in str(exc.value)


@pytest.fixture
def example(tmp_path: Path) -> Path:
    dst = tmp_path / "invoice"
    shutil.copytree(example_dir("invoice"), dst)
    return dst


async def test_only_the_named_steps_call_a_model(example: Path) -> None:
    inputs = load_inputs(
        example / "report.md",
        example / "repo",
        logs=sorted((example / "logs").iterdir()),
        traces=sorted((example / "traces").iterdir()),
    )
    report = await run_bug(
        inputs,
        models=Models(map=FakeModel(), judge=FakeModel()),
        options=replace(AgentOptions.for_env(PY), model_steps=ModelSteps.parse("relevance")),
        workspace=PlainWorkspace.create,
        until="root_cause",
    )
    d = report.to_dict()
    attempts = {name: s["model_attempts"] for name, s in d["stages"].items()}
    assert attempts["file_relevance"] > 0
    assert attempts["analysis"] == 0  # the example has logs: log_map was not taken
    assert attempts["root_cause"] == 0
    assert "model steps: relevance" in d["notes"]
    assert d["validated"] is False  # stopped at the root cause


def test_steps_follow_each_roles_trust() -> None:
    from fixbugs.run import model_steps

    high = ModelSteps.by_trust("high", "high")
    assert high == ALL_STEPS
    judge_only = ModelSteps.by_trust("low", "high")
    judged = {"reproduce", "judgment", "rewrite"}
    assert judged <= judge_only.enabled
    assert judge_only.enabled - judged <= model_steps.LOW_TRUST_STEPS.enabled
    assert ModelSteps.by_trust("low", "low") == model_steps.LOW_TRUST_STEPS
    assert ModelSteps.deadline_s("judgment", "high") > ModelSteps.deadline_s("judgment", "low")


async def test_no_model_is_loaded_when_no_step_would_call_one(
    example: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fixbugs.run import agent, model_steps

    monkeypatch.setattr(model_steps, "LOW_TRUST_STEPS", NO_STEPS)

    async def no_models(_config: object, _settings: object = None) -> Models:
        raise AssertionError("a model was loaded for a run that takes no model step")

    seen: dict[str, object] = {}

    async def fake_run_bug(inputs: object, *, models: object, options: AgentOptions, sink: object):
        seen.update(models=models, use_model=options.use_model, notes=inputs.notes)  # type: ignore[attr-defined]
        return "report"

    monkeypatch.setattr(agent, "checked_models", no_models)
    monkeypatch.setattr(agent, "run_bug", fake_run_bug)
    monkeypatch.delenv("AGENTRT_BASE_URL", raising=False)
    result = await agent.run_from_paths(
        report=example / "report.md", repo=example / "repo", python=user_python()
    )
    assert result == "report"
    assert seen["models"] is None and seen["use_model"] is False
    assert model_steps.NO_DEFAULT_STEPS in seen["notes"]  # type: ignore[operator]
