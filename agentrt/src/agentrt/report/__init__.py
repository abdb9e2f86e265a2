"""Reports of recorded runs: Gantt timeline, throughput/latency vs concurrency."""

from agentrt.report.cli import report_command
from agentrt.report.render import ReportFiles, render_report
from agentrt.report.timeline import (
    ConcurrencyPoint,
    GanttBar,
    Run,
    concurrency_profile,
    gantt,
    load_run_obj,
)

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
