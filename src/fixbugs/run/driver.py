"""What both drivers do around the stages: the stage names, their events, the report.

The stages' bodies are the ``run_*`` functions of :mod:`fixbugs.stages`' modules,
one per stage, each ``run_*(inputs, prior, ctx[, workspace]) -> result``;
two drivers call them and compose the :class:`~fixbugs.run.record.BugRun`
from their results: :func:`fixbugs.run.agent.run_bug` (one bug, the stages
as a dependency graph in one process) and :mod:`fixbugs.queued` (many bugs,
the stages as queue stages with their own worker pools, the record passed
between them as JSON). Both open a run with :func:`start_run`, say each
stage's start and finish with :func:`stage_started` and
:func:`stage_finished`, and close it with :func:`complete_report`, so a
run starts, proceeds and ends the same way whichever driver runs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from fixbugs.inputs import BugInputs
from fixbugs.run.context import RunContext
from fixbugs.run.progress import RunFinishedData
from fixbugs.run.record import BugRun
from fixbugs.run.report import RunReport, build_report

__all__ = [
    "STAGES",
    "StageName",
    "complete_report",
    "stage_finished",
    "stage_started",
    "start_run",
    "with_journal",
]

# the agent's stages, in dependency order (a prefix of it is a whole run)
STAGES = ("analysis", "file_relevance", "reproduction", "root_cause", "fix", "validation")
StageName = Literal["analysis", "file_relevance", "reproduction", "root_cause", "fix", "validation"]


def start_run(inputs: BugInputs, ctx: RunContext) -> None:
    """The run's first events: what is investigated, with which interpreter."""
    journal = ctx.journal
    journal.emit("run_started", "run", f"investigating: {inputs.report.title}")
    if ctx.options.models_line:
        # the CLI printed it as its first line already (it skips the "models" stage)
        journal.note("models", ctx.options.models_line)
    if ctx.options.python is not None:
        env = ctx.options.python
        # the report's ``environment`` has what the note names; the event is its line
        journal.emit("note", "reproduction", f"tests run with {env.describe()}")
        if env.pytest is None:
            journal.note(
                "reproduction",
                f"pytest is not installed in the project's environment ({env.python})",
            )
    if ctx.models is not None and ctx.options.use_model:
        journal.note("run", f"model steps: {ctx.model_steps().describe()}")
    for n in inputs.notes:
        journal.note("analysis", n)


def stage_started(ctx: RunContext, name: str) -> None:
    ctx.journal.emit("stage_started", name, f"{name} started")


def stage_finished(ctx: RunContext, name: str, status: str) -> None:
    """``status`` as the driver has it: the graph's (done, failed...) or the queue's (ok, error)."""
    ctx.journal.emit("stage_finished", name, f"{name} finished ({status})")


def with_journal(run: BugRun, ctx: RunContext) -> BugRun:
    """``run`` with what the run's journal (events, notes), recorder (calls) and spend
    budget (tokens and dollars per stage) hold now."""
    return run.with_journal(
        tuple(ctx.journal.events),
        tuple(ctx.journal.notes),
        tuple(ctx.recorder.records),
        ctx.spend.snapshot(),
    )


def complete_report(
    inputs: BugInputs, run: BugRun, ctx: RunContext, critical_path: Sequence[str]
) -> RunReport:
    """The run's report from its record, with what the journal and recorder hold now.

    Every stage of :data:`STAGES` has a wall time in the report (0 for one not run).
    """
    walls = {s: run.walls.get(s, 0.0) for s in STAGES}
    report = build_report(
        with_journal(run, ctx).with_walls(walls),
        title=inputs.report.title,
        environment=ctx.options.python,
        total_s=ctx.journal.elapsed(),
        critical_path=critical_path,
    )
    ctx.journal.emit("run_finished", "run", "done", RunFinishedData(report.validated))
    return report
