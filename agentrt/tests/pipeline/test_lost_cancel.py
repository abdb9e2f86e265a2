"""A store client that loses a cancellation must not keep the runner alive.

Python 3.11's ``asyncio.wait_for`` (which redis-py uses for every command)
returns normally when its task is cancelled just as the operation finishes.
These stores do the same on purpose, at a chosen moment, and count what the
runner does afterwards: without :func:`agentrt._checkpoint` it kept polling
(or renewing a lease) forever, and its task group never ended.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import pytest

from agentrt import cancel_requests, checkpoint
from agentrt._clock import FakeClock
from agentrt.pipeline import Pipeline, PipelineRunner, Stage, StageContext
from agentrt.queues import Delivery, MemoryQueue

AFTER_LOSS_MAX = 3  # calls tolerated after the loss before the test calls it a hang


async def _lose_cancel(cancel: asyncio.Task[Any]) -> None:
    """Cancel ``cancel`` (it cancels us in turn) and swallow it, as wait_for does."""
    cancel.cancel()
    # the operation "finished" in the same iteration: 3.11 returns its result
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.sleep(0)


class LosesClaimCancel(MemoryQueue):
    serving: asyncio.Task[None] | None = None
    lost = 0
    claims_after = 0

    async def claim(
        self, stage: str, consumer: str, *, lease_s: float, serialize: bool = False
    ) -> Delivery | None:
        if self.lost:
            self.claims_after += 1
            if self.claims_after > AFTER_LOSS_MAX:
                raise AssertionError("the runner kept claiming after it was cancelled")
        elif self.serving is not None:
            self.lost = 1
            await _lose_cancel(self.serving)
        return await super().claim(stage, consumer, lease_s=lease_s, serialize=serialize)


async def noop(ctx: StageContext) -> Mapping[str, Any]:
    return {}


async def test_a_claim_that_loses_the_cancel_still_ends_the_run() -> None:
    clock = FakeClock()
    q = LosesClaimCancel(clock=clock)
    runner = PipelineRunner(Pipeline([Stage("a", noop)], name="p"), q, poll_s=1.0)
    async with clock.autojumping():
        serving = asyncio.create_task(runner.run())
        q.serving = serving
        with pytest.raises(asyncio.CancelledError):
            await serving
    assert q.lost == 1
    assert q.claims_after == 0  # the loss was raised again right after the claim returned


class LosesHeartbeatCancel(MemoryQueue):
    stage_done: asyncio.Event
    lost = 0
    extends_after = 0

    async def extend(self, delivery: Delivery, lease_s: float) -> None:
        if self.lost:
            self.extends_after += 1
            if self.extends_after > AFTER_LOSS_MAX:
                raise AssertionError("the heartbeat kept renewing after it was cancelled")
        else:
            # the stage finishes while this renewal is in flight; the runner then
            # cancels the heartbeat, and the renewal loses that cancellation
            self.lost = 1
            self.stage_done.set()
            # the runner wakes and cancels the heartbeat, which this "finished"
            # renewal swallows
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0)
        await super().extend(delivery, lease_s)


async def test_a_lease_renewal_that_loses_the_cancel_still_lets_the_stage_end() -> None:
    clock = FakeClock()
    q = LosesHeartbeatCancel(clock=clock)
    q.stage_done = asyncio.Event()

    async def slow(ctx: StageContext) -> Mapping[str, Any]:
        await q.stage_done.wait()  # until the heartbeat has started renewing
        return {"ok": True}

    runner = PipelineRunner(Pipeline([Stage("a", slow, lease_s=3.0)], name="p"), q)
    async with clock.autojumping():
        await runner.submit("j", "i", {})
        await runner.run(until_idle=True)
    assert q.lost == 1 and q.extends_after == 0
    assert await q.results("i", ["a"]) == {"a": {"ok": True}}


async def test_checkpoint_raises_only_a_request_newer_than_its_reading() -> None:
    seen = cancel_requests()
    checkpoint(seen)  # no request: nothing to raise
    task = asyncio.current_task()
    assert task is not None
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.sleep(0)  # delivered here, and lost
    with pytest.raises(asyncio.CancelledError):
        checkpoint(seen)
    # a stale request (3.11's TaskGroup leaves one behind) is part of a later reading
    checkpoint(cancel_requests())
    task.uncancel()


async def test_two_runs_in_one_task_after_until_idle() -> None:
    """``run(until_idle=True)`` leaves no cancel request on its caller (3.11 TaskGroup)."""
    clock = FakeClock()
    q = MemoryQueue(clock=clock)
    runner = PipelineRunner(Pipeline([Stage("a", noop)], name="p"), q)
    async with clock.autojumping():
        for n in range(2):
            await runner.submit("j", f"i{n}", {})
            await runner.run(until_idle=True)
    assert cancel_requests() == 0
    assert runner.completed == 2
