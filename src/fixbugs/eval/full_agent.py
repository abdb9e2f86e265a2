"""The whole FixBugs agent as an evaluation runner.

``fixbugs eval`` hands each case's fresh tree and cached test interpreter
here; the interpreter is passed exactly as a user's would be (probed, made
visible read-only in the sandbox, first on ``PATH``). The agent sees the
report, the tree and the test command — never the gold answer, which only
:mod:`fixbugs.eval.score` reads, after the agent is done.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from fixbugs.eval.case import AgentOutput, AgentRunner, Case
from fixbugs.inputs import load_inputs
from fixbugs.localize import RankedFile
from fixbugs.pyenv.userenv import Interpreter
from fixbugs.run.agent import env_for_interpreter, run_bug
from fixbugs.run.context import AgentOptions, Models
from fixbugs.run.report_schema import ReportModel
from fixbugs.stages.driver import StageName

__all__ = ["full_agent", "output_from_report"]


def output_from_report(report: ReportModel) -> AgentOutput:
    """What the scorer needs from a run's report (its published model)."""
    ranked = tuple(
        RankedFile(f.path, f.score, tuple(f.reasons), tuple(f.lines)) for f in report.ranked_files
    )
    stage_s = {k: v.wall_s for k, v in report.stages.items()}
    notes = (*report.notes, report.validation.summary)
    rc = report.root_cause
    root = (rc.path, rc.lines[0], rc.lines[1]) if rc else None
    return AgentOutput(
        ranked,
        report.patch,
        report.reproduction.confirmed,
        stage_s,
        notes,
        root,
        report.degraded,
        report.reproduction.status == "confirmed" and report.reproduction.sbfl_skipped is None,
    )


def full_agent(
    models: Models | None,
    *,
    until: StageName = "validation",
    max_cost_usd: float | None = None,
    max_model_tokens: int | None = None,
) -> AgentRunner:
    """A runner that investigates each case with the agent itself, ``run_bug``.

    End to end by default (localize, reproduce, fix, validate);
    ``until="root_cause"`` is ``fixbugs eval --localize-only``: the same
    stages, with the same inputs and settings, stopped after the root cause.
    Each case is one run: ``max_cost_usd`` and ``max_model_tokens`` are
    each case's model budget (``--max-cost``, ``--max-tokens``).
    """

    async def run(case: Case, tree: Path, python_bin: Path) -> AgentOutput:
        report_file = case.report_file or case.dir / "report.md"
        inputs = load_inputs(report_file, tree, test=case.test_command or None)
        env = env_for_interpreter(Interpreter(python_bin / "python", "case env"))
        options = replace(
            AgentOptions.for_env(env),
            use_model=models is not None,
            test_timeout_s=300,
            max_cost_usd=max_cost_usd,
            max_model_tokens=max_model_tokens,
        )
        report = await run_bug(inputs, models=models, options=options, until=until)
        return output_from_report(report.model)

    return run
