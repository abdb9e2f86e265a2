"""The pipeline that crash tests kill workers under: a → (b, c) → d.

Each stage takes a few real milliseconds and logs its start and end, with
the worker's pid and the delivery's handle, to the file named by
``CRASH_LOG``; the parent reads the log to see which kills landed mid-stage
and whether any message was enqueued twice.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Mapping
from typing import Any

from agentrt.pipeline import Pipeline, Stage, StageContext

STARTED: Any = None  # a multiprocessing Event, set by the child on its first stage


def _log(line: str) -> None:
    fd = os.open(os.environ["CRASH_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())  # one write per line: atomic append
    finally:
        os.close(fd)


def _stage(compute: Any) -> Any:
    async def run(ctx: StageContext) -> Mapping[str, Any]:
        pid = os.getpid()
        _log(f"start {pid} {ctx.item} {ctx.stage} {ctx.delivery_id}")
        if STARTED is not None:
            STARTED.set()
        await asyncio.sleep(random.uniform(0.01, 0.04))  # the stage's own work
        value = compute(ctx)
        _log(f"end {pid} {ctx.item} {ctx.stage}")
        return {"v": value}

    return run


def make(lease_s: float = 0.3, concurrency: int = 2) -> Pipeline:
    def up(ctx: StageContext, name: str) -> int:
        return int(ctx.upstream[name]["v"])

    return Pipeline(
        [
            Stage(
                "a", _stage(lambda c: int(c.input["n"])), concurrency=concurrency, lease_s=lease_s
            ),
            Stage(
                "b",
                _stage(lambda c: 2 * up(c, "a")),
                after=("a",),
                concurrency=concurrency,
                lease_s=lease_s,
            ),
            Stage(
                "c",
                _stage(lambda c: up(c, "a") + 1),
                after=("a",),
                concurrency=concurrency,
                lease_s=lease_s,
            ),
            Stage(
                "d",
                _stage(lambda c: up(c, "b") + up(c, "c")),
                after=("b", "c"),
                concurrency=concurrency,
                lease_s=lease_s,
            ),
        ],
        name="crash",
        capacity=1000,
    )


PIPELINE = make()
