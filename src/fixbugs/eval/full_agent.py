"""The whole FixBugs agent as an evaluation runner.

``fixbugs eval`` hands each case's fresh tree and cached test interpreter
here; the interpreter is passed exactly as a user's would be (probed, made
visible read-only in the sandbox, first on ``PATH``). The agent sees the
report, the tree and the test command — never the gold answer, which only
:mod:`fixbugs.eval.score` reads, after the agent is done.
"""

from __future__ import annotations

from pathlib import Path

from fixbugs.eval.case import AgentOutput, AgentRunner, Case
from fixbugs.inputs import load_inputs
from fixbugs.localize import RankedFile
from fixbugs.pyenv.userenv import Interpreter
from fixbugs.run.agent import env_for_interpreter, run_bug
from fixbugs.run.context import AgentOptions, Models

__all__ = ["full_agent", "output_from_report"]


def output_from_report(d: dict) -> AgentOutput:  # type: ignore[type-arg]
    """What the scorer needs from a run's JSON report."""
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
    rc = d.get("root_cause")
    root = (rc["path"], int(rc["lines"][0]), int(rc["lines"][1])) if rc else None
    return AgentOutput(
        ranked,
        d["patch"],
        d["reproduction"]["confirmed"],
        stage_s,
        notes,
        root,
        bool(d.get("degraded")),
    )


def full_agent(models: Models | None) -> AgentRunner:
    """A runner that investigates each case end to end (localize, reproduce, fix, validate)."""

    async def run(case: Case, tree: Path, python_bin: Path) -> AgentOutput:
        report_file = case.report_file or case.dir / "report.md"
        inputs = load_inputs(report_file, tree, test=case.test_command or None)
        env = env_for_interpreter(Interpreter(python_bin / "python", "case env"))
        options = AgentOptions(
            test_env=env.command_env(),
            python=env,
            use_model=models is not None,
            test_timeout_s=300,
        )
        report = await run_bug(inputs, models=models, options=options)
        return output_from_report(report.data)

    return run
