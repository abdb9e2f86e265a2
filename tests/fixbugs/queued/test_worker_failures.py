"""A stage that fails for good under ``fixbugs worker`` ends its job's stream (issue 48).

The API follows a job's events from the queue's store; the service's own
workers publish a ``failed`` event per failed attempt and, once the queue
dead-letters the job's stage, the marker that ends the stream. A separate
worker process must do the same, or the live stream of a job whose stage died
waits for ever (seen by the process-level fault run's review).
:func:`failures_published` is the hook the worker adds to its queue's
``failures``: the queue alone counts deliveries, so it alone says which failure
was the last, also when no stage ran (workers that died holding the stage).
Here it runs on an in-memory queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentrt import FakeClock
from agentrt.pipeline import Pipeline, PipelineRunner, Stage, StageContext
from agentrt.queues import Message, StageState, open_queue
from fixbugs.queued.event_log import FINISHED
from fixbugs.queued.worker import failures_published

END = {"kind": FINISHED, "stage": "run", "at_s": 0.0, "data": {}}


async def _ok(ctx: StageContext) -> Mapping[str, Any]:
    return {"seen": True}


async def _broken(ctx: StageContext) -> Mapping[str, Any]:
    raise RuntimeError(f"attempt {ctx.attempt} lost its tree")


async def test_each_failure_is_an_event_and_the_last_one_ends_the_stream() -> None:
    q = open_queue("memory://", clock=FakeClock(), max_deliveries=3)
    published: list[tuple[str, dict[str, Any]]] = []
    q.failures.add(failures_published(lambda job, ev: published.append((job, ev))))
    pipeline = Pipeline([Stage("first", _ok), Stage("second", _broken, after=("first",))])
    runner = PipelineRunner(pipeline, q, poll_s=0.01)
    await runner.submit("bug-1", "bug-1", {"n": 1})
    await runner.run(until_idle=True)

    failed = [ev for job, ev in published if ev["kind"] == "failed"]
    assert [ev["data"]["final"] for ev in failed] == [False, False, True]
    assert all(ev["stage"] == "second" and "lost its tree" in ev["message"] for ev in failed)
    assert failed[0]["message"] == "RuntimeError: attempt 1 lost its tree"
    assert published[-1] == ("bug-1", END)
    assert sum(ev["kind"] == FINISHED for _, ev in published) == 1
    states = {r.stage: r.state for r in await q.records("bug-1")}
    assert states == {"first": StageState.DONE, "second": StageState.DEAD}


async def test_workers_that_all_died_holding_a_stage_end_the_stream_too() -> None:
    """No stage function raises here: the claim after the last lease ran out
    dead-letters the stage, and that claim's process says the job ended."""
    clock = FakeClock()
    q = open_queue("memory://", clock=clock, max_deliveries=2)
    published: list[tuple[str, dict[str, Any]]] = []
    q.failures.add(failures_published(lambda job, ev: published.append((job, ev))))
    await q.put(Message("bug-3", "only", "bug-3", {}))
    for _ in range(2):  # each holder dies: its lease runs out
        assert await q.claim("only", "doomed", lease_s=5.0) is not None
        clock.advance(6.0)
    assert published == []
    assert await q.claim("only", "survivor", lease_s=5.0) is None
    ((job, failed), (_, end)) = published
    assert job == "bug-3" and failed["kind"] == "failed" and failed["data"] == {"final": True}
    assert failed["stage"] == "only" and "delivered too many times" in failed["message"]
    assert end == END


async def test_a_stage_that_succeeds_publishes_nothing_of_its_own() -> None:
    q = open_queue("memory://", clock=FakeClock())
    published: list[tuple[str, dict[str, Any]]] = []
    q.failures.add(failures_published(lambda job, ev: published.append((job, ev))))
    runner = PipelineRunner(Pipeline([Stage("only", _ok)]), q, poll_s=0.01)
    await runner.submit("bug-2", "bug-2", {})
    await runner.run(until_idle=True)
    assert published == []
