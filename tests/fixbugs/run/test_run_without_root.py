"""The whole agent, six stages, on the bundled example, without root.

``run_bug`` takes its workspace as a seam (:mod:`fixbugs.sandbox.executor`);
here it is :class:`~fixbugs.sandbox.testing.PlainWorkspace` (plain
subprocesses in a copy), so this test needs no root, no namespaces and no
sandbox uid, and runs in the normal suite for any user. What it checks is
the agent's own logic end to end: localization, reproduction, SBFL, the
root cause, the fix search and validation, and that every command of the
repository went through the workspace it was given.
"""

from __future__ import annotations

import functools
import shutil
from dataclasses import replace
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
from fixbugs.run.progress import collecting_sink
from fixbugs.sandbox.testing import PlainWorkspace

# The example's tests need only the standard library (coverage for SBFL comes from
# FixBugs' overlay): the suite's user Python runs them, as in test_agent_e2e.
PY = env_for_interpreter(Interpreter(user_python(), "--python"))


@pytest.fixture
def example(tmp_path: Path) -> Path:
    dst = tmp_path / "invoice"
    shutil.copytree(example_dir("invoice"), dst)
    return dst


def _inputs(example: Path):
    return load_inputs(
        example / "report.md",
        example / "repo",
        logs=sorted((example / "logs").iterdir()),
        traces=sorted((example / "traces").iterdir()),
    )


async def test_the_bundled_example_runs_all_six_stages_without_root(example: Path) -> None:
    commands: list[str] = []
    inputs = _inputs(example)
    sink, events = collecting_sink()
    report = await run_bug(
        inputs,
        models=Models(map=FakeModel(), judge=FakeModel()),
        options=replace(AgentOptions.for_env(PY), model_steps=ALL_STEPS),
        sink=sink,
        workspace=functools.partial(PlainWorkspace.create, commands=commands),
    )
    d = report.to_dict()
    assert set(d["stages"]) == set(STAGES)
    assert {e.stage for e in events if e.kind == "stage_finished"} == set(STAGES)
    assert d["ranked_files"][0]["path"] == "shop/pricing.py"
    assert d["reproduction"]["confirmed"] and d["reproduction"]["origin"] == "report"
    assert d["root_cause"]["path"] == "shop/pricing.py"
    assert d["validated"] is True
    assert d["patch"].startswith("--- a/shop/pricing.py")
    # the tests ran, under coverage too, and only through the workspace given
    assert any("pytest" in c for c in commands)
    assert any("coverage" in c for c in commands)


async def test_localize_only_runs_the_same_stages_up_to_the_root_cause(example: Path) -> None:
    """``fixbugs eval --localize-only`` is ``run_bug(until="root_cause")``: no fix is sought."""
    commands: list[str] = []
    sink, events = collecting_sink()
    report = await run_bug(
        _inputs(example),
        models=Models(map=FakeModel(), judge=FakeModel()),
        options=replace(AgentOptions.for_env(PY), model_steps=ALL_STEPS),
        sink=sink,
        workspace=functools.partial(PlainWorkspace.create, commands=commands),
        until="root_cause",
    )
    d = report.to_dict()
    ran = {e.stage for e in events if e.kind == "stage_finished"}
    assert ran == {"analysis", "file_relevance", "reproduction", "root_cause"}
    assert d["stages"]["fix"]["wall_s"] == 0 and d["stages"]["validation"]["wall_s"] == 0
    assert d["root_cause"]["path"] == "shop/pricing.py"
    assert d["reproduction"]["confirmed"] and any("coverage" in c for c in commands), commands
    assert d["validated"] is False and d["patch"] is None
    assert d["validation"]["summary"] == "not run"
