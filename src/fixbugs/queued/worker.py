"""``fixbugs worker``: staged workers for chosen stages, on a shared queue.

Run one per machine (or several, each for some stages): every worker claims
from the same queue, records each stage's effect there, and appends the
bugs' progress events to the event log beside it
(:mod:`fixbugs.queued.event_log`), so a reader anywhere follows them live.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from agentrt import UserError
from agentrt.pipeline import PipelineRunner
from agentrt.queues import EpochClock, FailureHook, StageFailure, open_queue
from fixbugs.queued.event_log import EventPump, failed_event, finished_marker, open_events
from fixbugs.queued.pipeline import QUEUE_STAGES, Publish, StagedAgent, StagedConfig
from fixbugs.run.context import AgentOptions, Models

__all__ = ["failures_published", "run_worker", "worker_command"]


async def run_worker(
    queue: str,
    *,
    stages: list[str] | None,
    models: Models | None,
    python: Path,
    config: StagedConfig,
    drain: bool = False,
    namespace: str = "fixbugs",
) -> int:
    """Serve ``stages`` (default: all) until cancelled, or until idle with ``drain``."""
    from fixbugs.pyenv.userenv import Interpreter
    from fixbugs.run.agent import env_for_interpreter

    for s in stages or ():
        if s not in QUEUE_STAGES:
            raise UserError(f"unknown stage {s!r}; stages: {', '.join(QUEUE_STAGES)}")
    env = await asyncio.to_thread(env_for_interpreter, Interpreter(python, "--python"))
    options = replace(AgentOptions.for_env(env), use_model=models is not None)

    async def opts() -> AgentOptions:
        return options

    name = f"{socket.gethostname()}:{os.getpid()}"
    q = open_queue(queue, clock=EpochClock(), namespace=namespace)
    channel = open_events(queue, namespace=namespace)
    pump = EventPump(channel, tag={"worker": name})

    def publish(job: str, event: dict[str, Any]) -> None:
        pump.publish(job, event)
        if event.get("kind") == "run_finished":  # the bug's last event: readers may stop
            pump.publish(job, finished_marker())

    agent = StagedAgent(models, opts, clock=q.clock, publish=publish, config=config)
    q.failures.add(failures_published(pump.publish))
    runner = PipelineRunner(agent.pipeline(), q, stages=stages, consumer=name, poll_s=0.1)
    try:
        async with asyncio.TaskGroup() as tg:
            pumping = tg.create_task(pump.run())
            await runner.run(until_idle=drain)
            await pump.flush()
            pumping.cancel()
    finally:
        await q.aclose()
        await channel.aclose()
    return runner.completed


def failures_published(publish: Publish) -> FailureHook:
    """A hook for the queue's ``failures`` (:class:`~agentrt.queues.FailureHooks`): it publishes
    each failure the store records as the job's event and, once the store dead-lettered
    it, the marker that ends the job's stream.

    A reader on another machine (the API's live stream) then learns that the job
    ended, as the service's own workers tell it; without it the stream of a job
    whose stage failed for good, or whose workers all died holding it, would wait
    for ever.
    """

    async def hook(failure: StageFailure) -> None:
        job, stage = failure.message.job, failure.message.stage
        publish(job, failed_event(stage, failure.error, final=failure.dead))
        if failure.dead:
            publish(job, finished_marker())

    return hook


def worker_command(
    queue: Annotated[
        str,
        typer.Option(
            envvar="FIXBUGS_QUEUE",
            help="Queue URL: redis://HOST:PORT, rediss://USER:PASSWORD@HOST:PORT (TLS) or"
            " sqlite:///PATH; from the environment, a password stays out of the process list.",
        ),
    ],
    stage: Annotated[
        list[str] | None,
        typer.Option(help=f"Stage to serve (repeat); default all: {', '.join(QUEUE_STAGES)}."),
    ] = None,
    config: Annotated[
        Path | None, typer.Option(help="Model configuration (as for `fixbugs run`).")
    ] = None,
    no_model: Annotated[
        bool, typer.Option("--no-model", help="Static analysis, SBFL and repair only.")
    ] = False,
    python: Annotated[
        Path | None, typer.Option(help="Interpreter that runs the bugs' tests.")
    ] = None,
    sandbox_slots: Annotated[
        int | None, typer.Option(help="Sandbox stages at once (default: cores).")
    ] = None,
    model_slots: Annotated[
        int | None,
        typer.Option(
            min=1, help="Bugs in model stages at once (default: the endpoint's limit, or 8)."
        ),
    ] = None,
    drain: Annotated[bool, typer.Option(help="Exit once the queue is empty.")] = False,
    lease_s: Annotated[
        float,
        typer.Option(
            min=1.0,
            help="Seconds a stage's message stays leased without a heartbeat: how long a"
            " killed worker's stage waits before another worker takes it.",
        ),
    ] = StagedConfig().lease_s,
) -> None:
    """Serve stages of the staged agent from a shared queue."""
    from fixbugs.run.agent import models_from_config

    try:
        models = None if no_model else models_from_config(config)
        cfg = StagedConfig(
            sandbox_slots=sandbox_slots or max(1, os.cpu_count() or 1),
            model_slots=model_slots,
            lease_s=lease_s,
        )
        done = asyncio.run(
            run_worker(
                queue,
                stages=stage,
                models=models,
                python=python or Path(sys.executable),
                config=cfg,
                drain=drain,
            )
        )
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    print(f"{done} stage effects recorded", file=sys.stderr)
