"""``agentrt report RUN.json``: the run's timeline and concurrency plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from agentrt._errors import UserError
from agentrt.report._timeline import load_run_obj

__all__ = ["report_command"]


def report_command(
    run: Annotated[Path, typer.Argument(help="A run's JSON (fixbugs report or metrics).")],
    out: Annotated[
        Path | None, typer.Option(help="Output directory (default: beside RUN).")
    ] = None,
) -> None:
    """Render the Gantt timeline and throughput/latency-vs-concurrency plots (PNG + HTML)."""
    from agentrt.report._render import render_report  # matplotlib: the report extra

    try:
        obj = json.loads(run.read_text())
    except OSError as exc:
        raise UserError(f"cannot read {run}: {exc.strerror}") from None
    except ValueError as exc:
        raise UserError(f"{run} is not JSON: {exc}") from None
    if not isinstance(obj, dict) or not obj.get("calls"):
        raise UserError(f"{run} holds no call records ('calls'); give a run's report or metrics")
    try:
        loaded = load_run_obj(obj)
    except (TypeError, KeyError) as exc:
        raise UserError(f"{run}: a call record is malformed ({exc})") from None
    files = render_report(loaded, out or run.parent, stem=run.stem)
    typer.echo(f"wrote {files.gantt_png}, {files.concurrency_png} and {files.html}")
