"""What the service needs to run bugs through the staged pipeline.

The service knows a bug as one job; on the staged pipeline a bug is four
queue records (one per stage). :func:`job_record` folds them into the one
record the status API shows, and :func:`probed_options` gives the staged
workers the operator's test interpreter, probed once (as
``fixbugs.service.investigate.agent_investigator`` does for whole bugs).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path

from agentrt.queues import StageRecord, StageState
from fixbugs.run.context import AgentOptions

__all__ = ["job_record", "probed_options"]


def job_record(records: Sequence[StageRecord], stages: Sequence[str]) -> StageRecord | None:
    """One bug's record across the queue ``stages`` (in order); None if it has none.

    Dead if any stage is dead; done when the last stage is; running while a
    stage runs or the bug is between stages; failed while a failed stage
    waits for its next attempt; else queued.
    """
    by = {r.stage: r for r in records if r.stage in stages}
    if not by:
        return None
    recs = [by[s] for s in stages if s in by]
    first, last = recs[0], by.get(stages[-1])
    states = {r.state for r in recs}
    if StageState.DEAD in states:
        state = StageState.DEAD
    elif last is not None and last.state is StageState.DONE:
        state = StageState.DONE
    elif StageState.RUNNING in states:
        state = StageState.RUNNING
    elif StageState.FAILED in states:
        state = StageState.FAILED
    elif StageState.DONE in states:
        state = StageState.RUNNING  # between stages
    else:
        state = StageState.QUEUED
    ended = state in (StageState.DONE, StageState.DEAD)
    return StageRecord(
        first.item,
        stages[-1],
        first.job,
        state,
        attempts=max(r.attempts for r in recs),
        queued_at=first.queued_at,
        started_at=first.started_at,
        finished_at=max((r.finished_at or 0.0) for r in recs) if ended else None,
        error=next((r.error for r in reversed(recs) if r.error), None)
        if state is not StageState.DONE
        else None,
    )


def probed_options(
    python: Path | None = None, *, use_model: bool = True
) -> Callable[[], Awaitable[AgentOptions]]:
    """Options with the operator's interpreter (never one from an uploaded repository)."""
    from fixbugs.pyenv.userenv import Interpreter, TestEnv
    from fixbugs.run.agent import env_for_interpreter

    interp = Interpreter(Path(python or sys.executable), "--python")
    probed: list[TestEnv] = []
    lock = asyncio.Lock()

    async def options() -> AgentOptions:
        async with lock:
            if not probed:
                probed.append(await asyncio.to_thread(env_for_interpreter, interp))
        env = probed[0]
        return replace(AgentOptions.for_env(env), use_model=use_model)

    return options
