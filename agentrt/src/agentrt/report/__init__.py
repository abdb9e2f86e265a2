"""Reports of recorded runs: Gantt timeline, throughput/latency vs concurrency."""

from typing import TYPE_CHECKING

from agentrt.report._cli import report_command
from agentrt.report._timeline import (
    ConcurrencyPoint,
    GanttBar,
    Run,
    concurrency_profile,
    gantt,
    load_run_obj,
)

if TYPE_CHECKING:
    from agentrt.report._render import ReportFiles, render_report


def __getattr__(name: str) -> object:
    """The renderer needs matplotlib (the ``report`` extra): import it when asked for."""
    if name in ("ReportFiles", "render_report"):
        from agentrt.report import _render as render

        return getattr(render, name)
    raise AttributeError(f"module 'agentrt.report' has no attribute {name!r}")


__all__ = [
    "ConcurrencyPoint",
    "GanttBar",
    "ReportFiles",
    "Run",
    "concurrency_profile",
    "gantt",
    "load_run_obj",
    "render_report",
    "report_command",
]
