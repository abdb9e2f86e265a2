"""The whole FixBugs agent as an evaluation runner.

``fixbugs eval`` hands each case's fresh tree and cached test interpreter
here; the interpreter is passed exactly as a user's would be (probed, made
visible read-only in the sandbox, first on ``PATH``). The agent sees the
report, the tree and the test command — never the gold answer, which only
:mod:`fixbugs.eval.score` reads, after the agent is done.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from fixbugs.eval.case import AgentOutput, AgentRunner, Case
from fixbugs.eval.reproduction import reproduction_kind
from fixbugs.inputs import load_inputs
from fixbugs.localize import RankedFile
from fixbugs.pyenv.userenv import Interpreter
from fixbugs.run.agent import close_models, env_for_interpreter, models_from_config, run_bug
from fixbugs.run.context import AgentOptions, Models
from fixbugs.run.driver import StageName
from fixbugs.run.model_steps import ModelSteps
from fixbugs.run.report_schema import ReportModel

__all__ = ["endpoint_agent", "full_agent", "output_from_report"]


def output_from_report(report: ReportModel) -> AgentOutput:
    """What the scorer needs from a run's report (its published model)."""
    ranked = tuple(
        RankedFile(f.path, f.score, tuple(f.reasons), tuple(f.lines)) for f in report.ranked_files
    )
    stage_s = {k: v.wall_s for k, v in report.stages.items()}
    ttft = {k: v.ttft_s for k, v in report.stages.items() if v.ttft_s is not None}
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
        ttft,
        report.verdict,
        reproduction_kind(report.reproduction.status, report.reproduction.output_tail),
    )


def full_agent(
    models: Models | None,
    *,
    until: StageName = "validation",
    model_steps: ModelSteps | None = None,
    repair_budget_s: float | None = None,
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
            model_steps=model_steps,
            test_timeout_s=300,
            max_cost_usd=max_cost_usd,
            max_model_tokens=max_model_tokens,
        )
        if repair_budget_s is not None:
            options = replace(options, fix_budget_s=repair_budget_s)
        report = await run_bug(inputs, models=models, options=options, until=until)
        return output_from_report(report.model)

    return run


def endpoint_agent(
    env: Mapping[str, str],
    *,
    until: StageName = "validation",
    repair_budget_s: float | None = None,
    model_steps: ModelSteps | None = None,
) -> AgentRunner:
    """:func:`full_agent` with models built, per case, from ``env`` alone (as a user's
    ``AGENTRT_BASE_URL``/``AGENTRT_MODEL`` would point them), closed after the case."""

    async def run(case: Case, tree: Path, python_bin: Path) -> AgentOutput:
        models = models_from_config(None, env)
        try:
            agent = full_agent(
                models, until=until, model_steps=model_steps, repair_budget_s=repair_budget_s
            )
            return await agent(case, tree, python_bin)
        finally:
            await close_models(models)

    return run
