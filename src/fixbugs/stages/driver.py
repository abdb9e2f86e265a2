"""What both drivers do around the stages: the run's first events and its report.

The stages' bodies are the ``run_*`` functions of this package's modules,
one per stage; two drivers call them: :func:`fixbugs.run.agent.run_bug` (one
bug, the stages as a dependency graph in one process) and
:mod:`fixbugs.queued` (many bugs, the stages as queue stages with their own
worker pools, the context saved between them). Both open a run with
:func:`start_run` and close it with :func:`complete_report`, so a run
starts and ends the same way whichever driver runs it.
"""

from __future__ import annotations

from collections.abc import Sequence

from fixbugs.run.context import RunContext
from fixbugs.run.report import RunReport, build_report

__all__ = ["complete_report", "start_run"]


def start_run(ctx: RunContext) -> None:
    """The run's first events: what is investigated, with which interpreter."""
    inputs = ctx.inputs
    ctx.emit("run_started", "run", f"investigating: {inputs.report.title}")
    if ctx.options.python is not None:
        env = ctx.options.python
        ctx.emit("note", "reproduction", f"tests run with {env.describe()}", **env.to_dict())
        if env.pytest is None:
            ctx.note(
                "reproduction",
                f"pytest is not installed in the project's environment ({env.python})",
            )
    for n in inputs.notes:
        ctx.note("analysis", n)


def complete_report(
    ctx: RunContext, walls: dict[str, float], critical_path: Sequence[str]
) -> RunReport:
    """The run's report from its context, its stages' wall times and critical path."""
    report = build_report(ctx, walls, critical_path)
    ctx.emit("run_finished", "run", "done", validated=report.validated)
    return report
