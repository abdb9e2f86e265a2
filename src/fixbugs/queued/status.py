"""``fixbugs status --queue URL``: each queue stage's figures, in the terminal.

The figures ``/metrics`` exports for autoscaling
(:meth:`agentrt.queues.QueueBackend.stats`): per stage, messages queued, in
flight, dead-lettered, and the age of the oldest live one, and their total.
They are read straight from the shared store, so any machine that reaches it
can look, with no service running. The staged pipeline's stages are always
listed (zeros when idle), then any other stage the store holds (a whole-bug
service's ``investigate``).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from agentrt import Clock, UserError
from agentrt.queues import EpochClock, QueueStats, QueueUnavailable, StageStats, open_queue
from fixbugs.inputs.inert import terminal
from fixbugs.queued.pipeline import QUEUE_STAGES

__all__ = ["read_status", "status_command"]

_SCHEMES = ("sqlite", "redis", "rediss", "unix")


def _check_url(url: str) -> None:
    """Refuse what would show nothing true: another process's memory, a file that is not there.

    Opening a SQLite queue creates its file: a mistyped path must not leave
    an empty queue behind and report it idle.
    """
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in _SCHEMES:  # the URL itself is not echoed: it may hold a password
        raise UserError("--queue takes redis://HOST:PORT or sqlite:///PATH")
    if scheme == "sqlite":
        path = Path(rest[1:] if rest.startswith("/") else rest)
        if not rest or not path.is_file():
            raise UserError(f"no queue database at {str(path)!r}")


async def read_status(
    url: str, *, namespace: str = "fixbugs", clock: Clock | None = None
) -> QueueStats:
    """The queue stages' figures at ``url``: the pipeline's stages first, then any other.

    Ages are by ``clock`` (default: epoch seconds, what the service and the
    workers write)."""
    _check_url(url)
    try:
        q = open_queue(url, clock=clock or EpochClock(), namespace=namespace)
    except ValueError as exc:  # redis-py's verdict on a malformed URL
        raise UserError(f"bad queue URL: {exc}") from None
    try:
        found = await q.stats()
    except QueueUnavailable as exc:
        raise UserError(f"cannot read the queue: {exc}") from None
    except sqlite3.Error as exc:  # a file that is not a queue database
        raise UserError(f"cannot read the queue: {exc}") from None
    finally:
        await q.aclose()
    others = [s.stage for s in found.stages if s.stage not in QUEUE_STAGES]
    return QueueStats.of(found.stages, [*QUEUE_STAGES, *others])


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.1f} s"
    minutes, s = divmod(int(seconds), 60)
    return f"{minutes // 60}h {minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m {s:02d}s"


def _figures(st: StageStats) -> dict[str, int | float | None]:
    return {k: v for k, v in asdict(st).items() if k != "stage"}


def as_json(stats: QueueStats) -> str:
    """``{"stages": [{"stage", "queued", "in_flight", "dead", "oldest_age_s"}…], "total": {…}}``."""
    body = {"stages": [asdict(s) for s in stats.stages], "total": _figures(stats.total)}
    return json.dumps(body, indent=2)


def as_table(stats: QueueStats) -> Table:
    table = Table("stage", "queued", "in flight", "dead", "oldest", title="queue")
    for col in table.columns[1:]:
        col.justify = "right"
    rows = [*stats.stages, stats.total]
    for i, st in enumerate(rows):
        name = "total" if i == len(rows) - 1 else terminal(st.stage)  # the store's text
        table.add_row(
            name,
            str(st.queued),
            str(st.in_flight),
            str(st.dead),
            _age(st.oldest_age_s),
            end_section=i == len(rows) - 2,
        )
    return table


def status_command(
    queue: Annotated[
        str, typer.Option(help="Queue URL: redis://HOST:PORT or sqlite:///PATH (as for serve).")
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Show each queue stage's messages: queued, in flight, dead-lettered, oldest age."""
    try:
        stats = asyncio.run(read_status(queue))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    if json_out:
        typer.echo(as_json(stats))
    else:
        Console(emoji=False, highlight=False).print(as_table(stats))
