"""Drives a pipeline on a queue backend: worker slots, backpressure, leases.

The queue backend holds all state (what is queued, leased, done), so any
number of runners — in this process or on other machines — can serve the
same pipeline; a runner is only a set of worker slots. Every slot belongs
to one :class:`asyncio.TaskGroup`: an error or a cancellation stops them
all, and nothing outlives :meth:`PipelineRunner.run`.

Backpressure: a slot claims work only while every queue its stage feeds has
room, and :meth:`PipelineRunner.submit` waits while an entry queue is full.
So a stalled stage fills its queue, its upstream stops claiming, and its
queue holds at most its capacity plus one message per upstream slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from agentrt._checkpoint import cancel_requests, checkpoint
from agentrt._clock import Clock
from agentrt._json import JsonObject
from agentrt.metrics._recorder import stage as metrics_stage
from agentrt.pipeline._stage import Pipeline, Stage, StageContext
from agentrt.queues._backend import QueueBackend
from agentrt.queues._types import Delivery, QueueUnavailable

__all__ = ["PipelineRunner"]

T = TypeVar("T")


class PipelineRunner:
    """Runs the slots of ``stages`` (default: all) of ``pipeline`` on ``backend``.

    ``consumer`` names this runner to the backend (default host:pid), so a
    lease held by a dead runner is recognisably someone else's. ``poll_s``
    is how often a slot with nothing to do looks again for work that other
    processes enqueued (work from this process wakes it at once).
    """

    def __init__(
        self,
        pipeline: Pipeline,
        backend: QueueBackend,
        *,
        stages: Sequence[str] | None = None,
        consumer: str | None = None,
        poll_s: float = 0.2,
        backoff_s: tuple[float, float] = (0.05, 2.0),
    ) -> None:
        self.pipeline = pipeline
        self.backend = backend
        self.clock: Clock = backend.clock
        names = list(stages) if stages else [s.name for s in pipeline.stages]
        self.stages = [pipeline.stage(n) for n in names]
        self.consumer = consumer or f"{socket.gethostname()}:{os.getpid()}"
        self.poll_s = poll_s
        self._backoff = backoff_s
        self.busy = 0  # slots executing a stage right now
        self.completed = 0  # effects this runner applied
        self.duplicates = 0  # completions that found the effect already recorded

    # -- store access that rides out an unavailable store -------------------
    async def _retry(self, op: Callable[[], Awaitable[T]]) -> T:
        delay, cap = self._backoff
        # Every loop of the runner (claim, drain, submit) goes through here: a
        # cancellation a store client lost during ``op`` is raised again.
        seen = cancel_requests()
        while True:
            try:
                result = await op()
            except QueueUnavailable:
                checkpoint(seen)
                await self.clock.sleep(delay)
                delay = min(cap, delay * 2)
            else:
                checkpoint(seen)
                return result

    # -- producers ----------------------------------------------------------
    async def submit(
        self,
        job: str,
        item: str,
        payload: JsonObject,
        *,
        key: str | None = None,
        group: str = "",
    ) -> None:
        """Enqueue an item at the entry stages; waits while one is full.

        ``group`` is who ``job`` belongs to: each stage shares its workers
        between groups first (:class:`~agentrt.queues._fairness.GroupFair`)."""
        for m in self.pipeline.entry_messages(item, job, payload, key, group):
            cap = self.pipeline.capacity_of(m.stage)
            while await self._retry(functools.partial(self.backend.depth, m.stage)) >= cap:
                await self.backend.wait(self.poll_s)
            await self._retry(functools.partial(self.backend.put, m))

    # -- workers ------------------------------------------------------------
    async def run(self, *, until_idle: bool = False) -> None:
        """Serve the stages; with ``until_idle``, return once no live message is left.

        ``until_idle`` is for work submitted before the call (or by other
        processes); a producer in this process should use :meth:`drain`.
        """
        async with asyncio.TaskGroup() as tg:
            serving = [tg.create_task(self._serve_stage(st), name=st.name) for st in self.stages]
            if until_idle:
                tg.create_task(self._stop_when_idle(serving), name="idle-watch")

    async def _stop_when_idle(self, serving: list[asyncio.Task[None]]) -> None:
        await self.drain()
        # End the slots by cancelling them, not by an error in the group: on
        # 3.11 a task group aborted by a child's error leaves a cancel request
        # counted on the task that called run() (see agentrt._checkpoint).
        for task in serving:
            task.cancel()

    async def drain(self) -> None:
        """Return once the store holds no queued or running message.

        For a producer that runs :meth:`run` beside its own submissions:
        submit everything, then ``await drain()``, then cancel the run.
        """
        while await self._retry(self.backend.pending) > 0:
            await self.backend.wait(self.poll_s)

    async def _has_room(self, st: Stage) -> bool:
        for d in self.pipeline.downstream(st.name):
            depth = await self._retry(functools.partial(self.backend.depth, d.name))
            if depth >= self.pipeline.capacity_of(d.name):
                return False
        return True

    async def _serve_stage(self, st: Stage) -> None:
        """One claimer per stage hands work to up to ``concurrency`` running slots.

        A single claimer (rather than every idle slot polling) keeps an idle
        stage to one store query per change, whatever its concurrency.
        """
        consumer = f"{self.consumer}/{st.name}"
        permits = asyncio.Semaphore(st.concurrency)
        async with asyncio.TaskGroup() as tg:
            while True:
                await permits.acquire()
                try:
                    d = await self._next(st, consumer)
                except BaseException:
                    permits.release()
                    raise
                tg.create_task(self._run_one(st, d, permits), name=f"{st.name}/{d.message.item}")

    async def _next(self, st: Stage, consumer: str) -> Delivery:
        while True:
            if await self._has_room(st):
                d = await self._retry(
                    lambda: self.backend.claim(
                        st.name, consumer, lease_s=st.lease_s, serialize=st.serialize
                    )
                )
                if d is not None:
                    return d
            await self.backend.wait(self.poll_s)

    async def _run_one(self, st: Stage, d: Delivery, permits: asyncio.Semaphore) -> None:
        self.busy += 1
        try:
            await self._execute(st, d)
        finally:
            self.busy -= 1
            permits.release()

    async def _execute(self, st: Stage, d: Delivery) -> None:
        m = d.message
        upstream = await self._retry(lambda: self.backend.results(m.item, st.after))
        ctx = StageContext(
            item=m.item,
            job=m.job,
            stage=st.name,
            input=m.payload,
            upstream=upstream,
            attempt=d.attempt,
            key=m.key,
            model=st.model,
            clock=self.clock,
            delivery_id=d.receipt,
        )
        async with asyncio.TaskGroup() as tg:
            beat = tg.create_task(self._heartbeat(st, d), name=f"lease/{m.item}/{st.name}")
            outcome = await self._attempt(st, ctx)
            beat.cancel()
        if isinstance(outcome, Exception):
            error = f"{type(outcome).__name__}: {outcome}"
            await self._retry(lambda: self.backend.fail(d, error))
            return
        emits = self.pipeline.emits_after(m)
        applied = await self._retry(lambda: self.backend.complete(d, outcome, emits))
        if applied:
            self.completed += 1
        else:
            self.duplicates += 1

    async def _attempt(self, st: Stage, ctx: StageContext) -> JsonObject | Exception:
        """Run the stage function; its failure is a value, so the lease task ends cleanly."""
        try:
            with metrics_stage(st.name):
                if st.gate is None:
                    return await st.run(ctx)
                async with st.gate():
                    return await st.run(ctx)
        except Exception as exc:  # the stage's failure, reported to the store
            return exc

    async def _heartbeat(self, st: Stage, d: Delivery) -> None:
        # invariant: the lease is renewed at least twice per lease period
        seen = cancel_requests()
        while True:
            await self.clock.sleep(st.lease_s / 3)
            with contextlib.suppress(QueueUnavailable):
                await self.backend.extend(d, st.lease_s)
            checkpoint(seen)  # else a lost cancel keeps the lease, and the slot, forever
