"""The embedded model is an extra: a run without it installed says so and goes on.

No step on the embedded model changed a figure (MEASUREMENTS.md), so the
default set-up does not compile llama-cpp-python. Without it a default run
loads no model and its first line says the model is not installed and how
to add it; a run that asks for a step on it is a one-line error (exit 2)
before any work, as for any endpoint that cannot serve; an eval whose runs
take no step checks no endpoint.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import fixbugs.run.agent
import fixbugs.run.preflight
from agentrt import load_settings
from fixbugs.run.model_steps import ModelSteps
from fixbugs.run.preflight import ModelUnavailable, models_line, preflight


@pytest.fixture
def without_llama(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fixbugs.run.preflight, "embedded_installed", lambda: False)


def test_first_line_says_the_embedded_model_is_not_installed(without_llama: None) -> None:
    settings = load_settings(None, {}, probe_local=False)
    line = models_line(settings, ModelSteps.parse("none"))
    assert line.startswith("models: none used: local (smollm2-135m) takes no step by default")
    assert "not installed" in line and ".[local-model]" in line


def test_first_line_when_installed_does_not_say_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fixbugs.run.preflight, "embedded_installed", lambda: True)
    line = models_line(load_settings(None, {}, probe_local=False), ModelSteps.parse("none"))
    assert "not installed" not in line


def test_a_step_on_a_missing_embedded_model_is_a_one_line_error(without_llama: None) -> None:
    settings = load_settings(None, {}, probe_local=False)
    with pytest.raises(ModelUnavailable, match=r"not installed .*local-model"):
        asyncio.run(preflight(settings))


def test_eval_checks_no_endpoint_when_no_step_calls_a_model(
    without_llama: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(
        fixbugs.run.agent, "run_settings", lambda config: load_settings(None, {}, probe_local=False)
    )
    asyncio.run(fixbugs.run.agent.preflight_steps(None, None))  # default: no step, no check
    with pytest.raises(ModelUnavailable):
        asyncio.run(fixbugs.run.agent.preflight_steps(None, ModelSteps.parse("all")))
