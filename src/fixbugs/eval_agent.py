"""The whole FixBugs agent as an evaluation runner.

``fixbugs eval`` hands each case's fresh tree and test interpreter here; the
agent sees the report, the tree and the test command — never the gold
answer, which only :mod:`fixbugs.score` reads, after the agent is done.
"""

from __future__ import annotations

import os
from pathlib import Path

from fixbugs.agent import run_bug
from fixbugs.context import AgentOptions, Models
from fixbugs.eval import AgentOutput, AgentRunner, Case
from fixbugs.inputs import load_inputs
from fixbugs.localize import RankedFile

__all__ = ["full_agent"]


def full_agent(models: Models | None) -> AgentRunner:
    """A runner that investigates each case end to end (localize, reproduce, fix, validate)."""

    async def run(case: Case, tree: Path, python_bin: Path) -> AgentOutput:
        inputs = load_inputs(case.dir / "report.md", tree, test=case.test_command)
        env = {
            "PATH": f"{python_bin}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        options = AgentOptions(test_env=env, use_model=models is not None, test_timeout_s=300)
        report = await run_bug(inputs, models=models, options=options)
        d = report.data
        ranked = tuple(
            RankedFile(
                f["path"],
                f["score"],
                tuple(f["reasons"]),
                tuple((a, b) for a, b in f.get("lines", [])),
            )
            for f in d["ranked_files"]
        )
        stage_s = {k: v["wall_s"] for k, v in d["stages"].items()}
        notes = (*d["notes"], d["validation"]["summary"])
        return AgentOutput(ranked, d["patch"], d["reproduction"]["confirmed"], stage_s, notes)

    return run
