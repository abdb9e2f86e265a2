"""What a worker does with one bug: load its saved inputs and run the agent.

Kept apart from the job flow so tests and the load benchmark can run the
flow with a stand-in investigator, and a deployment can choose the models.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import replace
from pathlib import Path

from agentrt import Clock
from fixbugs.queued.spec import BugSpec
from fixbugs.run.context import AgentOptions, Models
from fixbugs.run.progress import EventSink
from fixbugs.run.report_schema import ReportModel
from fixbugs.service.jobs import Investigator

__all__ = ["agent_investigator"]


def agent_investigator(
    models: Models | None, *, python: Path | None = None, clock: Clock | None = None
) -> Investigator:
    """Runs :func:`fixbugs.run.agent.run_bug` on the spec's files with ``models``.

    The tests' interpreter is the operator's (``python``, default this one),
    never one found in an uploaded repository: choosing and probing an
    interpreter runs it outside the sandbox. It is probed once, and the
    sandbox shows its venv and prefix read-only (``TestEnv.readonly_paths``).
    """
    from fixbugs.pyenv.userenv import Interpreter, TestEnv
    from fixbugs.run.agent import env_for_interpreter, run_bug

    interp = Interpreter(Path(python or sys.executable), "--python")
    probed: list[TestEnv] = []
    lock = asyncio.Lock()

    async def test_env() -> TestEnv:
        async with lock:
            if not probed:
                probed.append(await asyncio.to_thread(env_for_interpreter, interp))
        return probed[0]

    async def investigate(spec: BugSpec, sink: EventSink) -> ReportModel:
        inputs = await spec.load_isolated()  # its own process, with a deadline
        env = await test_env()
        options = replace(
            AgentOptions.for_env(env), use_model=models is not None, index_dir=spec.index_dir
        )
        report = await run_bug(inputs, models=models, options=options, clock=clock, sink=sink)
        return report.model

    return investigate
