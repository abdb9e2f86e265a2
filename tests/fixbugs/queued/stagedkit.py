"""The staged agent on copies of the bundled example, for the staged tests."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from userpython import user_python

from agentrt import Clock
from agentrt.llm import FakeModel
from fixbugs.examples import example_dir
from fixbugs.pyenv.userenv import Interpreter
from fixbugs.queued import Publish, StagedAgent, StagedConfig
from fixbugs.queued.spec import BugSpec
from fixbugs.run.agent import env_for_interpreter
from fixbugs.run.context import AgentOptions, Models
from fixbugs.run.model_steps import ALL_STEPS

_ENV: list[Any] = []


def example_spec(dst: Path) -> dict[str, Any]:
    shutil.copytree(example_dir("invoice"), dst)
    return BugSpec(
        title=f"example {dst.name}",
        report=dst / "report.md",
        repo=dst / "repo",
        logs=tuple(sorted((dst / "logs").iterdir())),
        traces=tuple(sorted((dst / "traces").iterdir())),
    ).payload()


async def options() -> AgentOptions:
    # the example's tests need only the standard library: the suite's user Python
    if not _ENV:
        _ENV.append(env_for_interpreter(Interpreter(user_python(), "--python")))
    env = _ENV[0]
    return replace(AgentOptions.for_env(env), max_candidates=40, model_steps=ALL_STEPS)


def staged_agent(clock: Clock, publish: Publish, **cfg: Any) -> StagedAgent:
    models = Models(map=FakeModel(), judge=FakeModel())
    return StagedAgent(models, options, clock=clock, publish=publish, config=StagedConfig(**cfg))
