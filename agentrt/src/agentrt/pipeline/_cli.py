"""`agentrt worker`: serve some (or all) stages of a pipeline from a queue.

Run it on any machine that reaches the queue: ``--queue redis://HOST:PORT/0``
shares work between machines; the default, a SQLite file, runs every stage
in this one process with no server to start.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated

import typer

from agentrt.pipeline._loading import load_pipeline
from agentrt.pipeline._runner import PipelineRunner
from agentrt.pipeline._stage import Pipeline
from agentrt.queues._backend import open_queue

__all__ = ["DEFAULT_QUEUE", "worker"]

DEFAULT_QUEUE = "sqlite:///.agentrt/queue.db"


def worker(
    pipeline: Annotated[
        str, typer.Option("--pipeline", "-p", help="MODULE:NAME or FILE.py:NAME of a Pipeline.")
    ],
    stage: Annotated[
        list[str] | None,
        typer.Option("--stage", "-s", help="Stage to serve (repeatable); default: all."),
    ] = None,
    queue: Annotated[
        str,
        typer.Option("--queue", "-q", help="memory://, sqlite:///PATH or redis://HOST:PORT/DB."),
    ] = DEFAULT_QUEUE,
    drain: Annotated[
        bool, typer.Option("--drain", help="Exit once no queued or running work is left.")
    ] = False,
    max_deliveries: Annotated[
        int, typer.Option(help="Dead-letter an item after this many deliveries to a stage.")
    ] = 5,
    name: Annotated[str | None, typer.Option(help="Consumer name (default host:pid).")] = None,
) -> None:
    """Serve pipeline stages from a durable queue (at-least-once, effects once)."""
    p = load_pipeline(pipeline)
    stages = stage or None
    if stages:
        for s in stages:
            p.stage(s)  # unknown names are a one-line user error
    asyncio.run(_serve(p, queue, stages, drain, max_deliveries, name))


async def _serve(
    p: Pipeline, queue: str, stages: list[str] | None, drain: bool, max_del: int, name: str | None
) -> None:
    backend = open_queue(queue, max_deliveries=max_del, namespace=p.name)
    runner = PipelineRunner(p, backend, stages=stages, consumer=name)
    served = ", ".join(s.name for s in runner.stages)
    print(f"worker {runner.consumer} serving {served} from {queue}", file=sys.stderr, flush=True)
    try:
        await runner.run(until_idle=drain)
    finally:
        await backend.aclose()
    print(
        f"worker {runner.consumer} done: {runner.completed} stage effects applied, "
        f"{runner.duplicates} duplicate completions ignored",
        file=sys.stderr,
        flush=True,
    )
