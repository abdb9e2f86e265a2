"""A stage that fails for good under ``fixbugs worker`` ends its job's stream (issue 48).

The API follows a job's events from the queue's store; the service's own
workers publish a ``failed`` event per failed attempt and, on the last one,
the marker that ends the stream. A separate worker process must do the same,
or the live stream of a job whose stage died waits for ever (seen by the
process-level fault run's review). :func:`failures_published` is what the
worker wraps its pipeline with; here it runs on an in-memory queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentrt import FakeClock
from agentrt.pipeline import Pipeline, PipelineRunner, Stage, StageContext
from agentrt.queues import StageState, open_queue
from fixbugs.queued.event_log import FINISHED
from fixbugs.queued.worker import failures_published


async def _ok(ctx: StageContext) -> Mapping[str, Any]:
    return {"seen": True}


async def _broken(ctx: StageContext) -> Mapping[str, Any]:
    raise RuntimeError(f"attempt {ctx.attempt} lost its tree")


async def test_each_failure_is_an_event_and_the_last_one_ends_the_stream() -> None:
    q = open_queue("memory://", clock=FakeClock(), max_deliveries=3)
    published: list[tuple[str, dict[str, Any]]] = []
    base = Pipeline([Stage("first", _ok), Stage("second", _broken, after=("first",))])
    pipeline = failures_published(base, lambda job, ev: published.append((job, ev)), 3)
    runner = PipelineRunner(pipeline, q, poll_s=0.01)
    await runner.submit("bug-1", "bug-1", {"n": 1})
    await runner.run(until_idle=True)

    failed = [ev for job, ev in published if ev["kind"] == "failed"]
    assert [ev["data"]["final"] for ev in failed] == [False, False, True]
    assert all(ev["stage"] == "second" and "lost its tree" in ev["message"] for ev in failed)
    assert published[-1] == ("bug-1", {"kind": FINISHED, "stage": "run", "at_s": 0.0, "data": {}})
    assert sum(ev["kind"] == FINISHED for _, ev in published) == 1
    states = {r.stage: r.state for r in await q.records("bug-1")}
    assert states == {"first": StageState.DONE, "second": StageState.DEAD}


async def test_a_stage_that_succeeds_publishes_nothing_of_its_own() -> None:
    q = open_queue("memory://", clock=FakeClock())
    published: list[tuple[str, dict[str, Any]]] = []
    pipeline = failures_published(
        Pipeline([Stage("only", _ok)]), lambda job, ev: published.append((job, ev)), 5
    )
    runner = PipelineRunner(pipeline, q, poll_s=0.01)
    await runner.submit("bug-2", "bug-2", {})
    await runner.run(until_idle=True)
    assert published == []
