"""The service's job flow: admission, the durable queue, workers, status.

A submitted bug is one item of a one-stage pipeline (``investigate``), or of
the staged agent's queue stages (:mod:`fixbugs.queued`), on an
:mod:`agentrt.queues` backend — SQLite embedded by default, Redis Streams
when workers run on other machines. The queue is bounded: a submission that
finds it full is refused with the time to come back (:mod:`.admission`),
never parked in memory. The investigation's effect — the JSON report — is
recorded by the backend exactly once per bug; its progress events go to the
:class:`~.event_hub.EventHub` that the SSE stream reads (:mod:`.job_events`).

Tenants share the queue fairly: each may hold at most ``tenant_capacity``
bugs, and every message of a bug carries its tenant as the queue's
fairness group, so each stage's workers take the tenants in turn
(:class:`agentrt.queues.GroupFair`) before choosing between one tenant's bugs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any, Protocol

from agentrt import Clock
from agentrt.observability import FlowState
from agentrt.pipeline import Pipeline, PipelineRunner, Stage, StageContext, StageFn
from agentrt.queues import QueueBackend, StageFailure, StageRecord, StageState
from fixbugs.queued.event_log import EventChannel
from fixbugs.queued.pipeline import Publish
from fixbugs.queued.service import job_record
from fixbugs.queued.spec import BugSpec
from fixbugs.run.driver import STAGES
from fixbugs.run.progress import EventSink
from fixbugs.run.report_schema import ReportModel
from fixbugs.service.admission import Admitted, RunTimes, admit
from fixbugs.service.auth import OPEN_TENANT
from fixbugs.service.event_hub import EventHub
from fixbugs.service.job_events import JobEvents
from fixbugs.service.job_files import Workspace
from fixbugs.service.job_index import JobIndex, JobMeta, expired
from fixbugs.service.job_status import JobStatus, QueueFull, ShareFull, stage_progress
from fixbugs.service.pipeline_view import (
    Admissions,
    PipelineView,
    QueueView,
    StageLoad,
    WorkerSlots,
)

__all__ = [
    "REPORT_TTL_S",
    "STAGE",
    "Investigator",
    "JobService",
    "JobStatus",
    "QueueFull",
    "RunObserver",
    "ShareFull",
    "StagePipeline",
]

STAGE = "investigate"
REPORT_TTL_S = 7 * 86400.0  # how long a finished job's report is served
_SWEEP_S = 60.0

# Runs one bug from its spec (paths inside the job's directory) and returns
# its report; progress goes to the sink as it happens.
Investigator = Callable[[BugSpec, EventSink], Awaitable[ReportModel]]


class StagePipeline(Protocol):
    """What runs a bug on queue stages: :class:`~fixbugs.queued.StagedAgent`, or a stand-in."""

    def pipeline(self) -> Pipeline: ...


class RunObserver(Protocol):
    """Told about each finished run (tracing, metrics); must not raise."""

    def run_finished(self, job: str, report: ReportModel) -> None: ...


class JobService:
    """Submissions in, reports out; ``run()`` serves this process's workers."""

    def __init__(
        self,
        backend: QueueBackend,
        investigator: Investigator,
        workspace: Workspace,
        *,
        clock: Clock,
        capacity: int = 16,
        workers: int = 2,
        lease_s: float = 60.0,
        observer: RunObserver | None = None,
        hub: EventHub | None = None,
        flow: Callable[[], FlowState] | None = None,
        report_ttl_s: float = REPORT_TTL_S,
        events: EventChannel | None = None,
        staged: Callable[[Publish], StagePipeline] | None = None,
        tenant_capacity: int | None = None,
    ) -> None:
        """``tenant_capacity`` bounds one tenant's bugs queued or running, so that
        one tenant at its share leaves room for the others (None: only
        ``capacity`` bounds them; :func:`~.admission.tenant_share` is what
        ``fixbugs serve`` picks).

        With ``events`` (an event log in the queue's store), workers write their
        progress there and :meth:`run` relays every followed job's log into
        ``hub``: SSE then shows live events of bugs run by any process.

        With ``staged`` (builds a :class:`~fixbugs.queued.StagedAgent` for a
        publisher; ``fixbugs serve``'s default), a bug runs through the staged
        pipeline's queue stages instead of one ``investigate`` job;
        ``investigator`` is then unused."""
        self.backend = backend
        self.report_ttl_s = report_ttl_s
        self.index = JobIndex(workspace.root)
        self.investigator = investigator
        self.workspace = workspace
        self.clock = clock
        self.capacity = capacity
        self.tenant_capacity = capacity if tenant_capacity is None else tenant_capacity
        self.workers = workers
        self.observer = observer
        self.flow = flow
        self.hub = hub or EventHub(clock)
        self.events = JobEvents(self.hub, events, on_finished=self._ended)
        self.staged = staged is not None
        if staged is not None:
            base = staged(self.events.publish).pipeline()
            self.pipeline = Pipeline(
                [
                    replace(st, run=self._staged_run(st, st is base.stages[-1]))
                    for st in base.stages
                ],
                name=base.name,
                capacity=base.capacity,
            )
        else:
            self.pipeline = Pipeline(
                [
                    Stage(
                        STAGE,
                        self._investigate,
                        concurrency=max(1, workers),
                        lease_s=lease_s,
                        capacity=capacity,
                    )
                ],
                name="fixbugs",
                capacity=capacity,
            )
        self.stage_names = tuple(st.name for st in self.pipeline.stages)
        self.runner = PipelineRunner(self.pipeline, backend, poll_s=0.5)
        backend.failures.add(self._failed)
        self.run_times = RunTimes()
        self.accepted = 0
        self.rejected = 0
        self._titles: dict[str, str] = {}
        self._admit_lock = asyncio.Lock()

    # -- submissions --------------------------------------------------------
    def new_id(self) -> str:
        return uuid.uuid4().hex[:16]

    async def _refusal(self, tenant: str) -> QueueFull | None:
        """Why ``tenant``'s next bug may not enter now (the queue, then its share), or None."""
        mean_s = self.run_times.mean_s
        verdict = admit(await self.depth(), self.capacity, workers=self.workers, mean_run_s=mean_s)
        if not isinstance(verdict, Admitted):
            return QueueFull(verdict.depth, verdict.retry_after_s)
        if self.tenant_capacity < self.capacity:
            mine = await self.depth(tenant)
            share = admit(mine, self.tenant_capacity, workers=self.workers, mean_run_s=mean_s)
            if not isinstance(share, Admitted):
                return ShareFull(share.depth, share.retry_after_s)
        return None

    async def check_room(self, tenant: str = OPEN_TENANT) -> None:
        """Refuse early (before saving uploads) when the queue or ``tenant``'s share is full."""
        if (refusal := await self._refusal(tenant)) is not None:
            self.rejected += 1
            raise refusal

    async def enqueue(self, job: str, spec: BugSpec, *, tenant: str = OPEN_TENANT) -> None:
        """Admit and enqueue ``tenant``'s bug whose files are saved; :class:`QueueFull` if no room.

        Check and put happen under one lock, so this process never puts past
        the capacity or a tenant's share (other processes may overshoot by
        their in-flight puts). The bug's messages carry ``tenant`` as their
        fairness group.
        """
        async with self._admit_lock:
            if (refusal := await self._refusal(tenant)) is not None:
                self.rejected += 1
                raise refusal
            title = spec.title or job
            self._titles[job] = title
            self.index.record(JobMeta(job, tenant, title, self.clock.now()))
            # the run's index cache lives in the job's directory and is deleted with it:
            # a tenant's source never stays in a cache another tenant's run reads
            index_dir = self.workspace.job_dir(job) / "index"
            payload = spec.model_copy(update={"index_dir": index_dir}).payload()
            self.workspace.write_text(job, "spec.json", json.dumps(payload))
            self.hub.open(job)
            for m in self.pipeline.entry_messages(job, job, payload, group=tenant):
                await self.backend.put(m)
            self.accepted += 1

    # -- reading ------------------------------------------------------------
    async def depth(self, tenant: str | None = None) -> int:
        """Bugs queued or running (on the staged pipeline: in any of its stages), of
        ``tenant`` only if given."""
        return sum([await self.backend.depth(s, tenant) for s in self.stage_names])

    def _job_records(self, recs: list[StageRecord]) -> list[StageRecord]:
        """One record per bug: the ``investigate`` one, or the staged ones folded."""
        if not self.staged:
            return [r for r in recs if r.stage == STAGE]
        by_job: dict[str, list[StageRecord]] = {}
        for r in recs:
            by_job.setdefault(r.job, []).append(r)
        out = [job_record(rs, self.stage_names) for rs in by_job.values()]
        return [r for r in out if r is not None]

    def title(self, job: str) -> str:
        if job not in self._titles and (meta := self.index.get(job)) is not None:
            self._titles[job] = meta.title
        if job not in self._titles:
            try:
                spec = json.loads((self.workspace.job_dir(job) / "spec.json").read_text())
                self._titles[job] = str(spec.get("title") or job)
            except (OSError, ValueError):
                return job
        return self._titles[job]

    def _status(self, rec: StageRecord) -> JobStatus:
        return JobStatus.of(rec, self.title(rec.job), self.hub.log(rec.job))

    def visible(self, job: str, tenant: str | None) -> bool:
        """``job`` exists for ``tenant`` (None: the service itself, which sees all)."""
        if tenant is None:
            return True
        meta = self.index.get(job)
        return (
            meta is not None
            and meta.tenant == tenant
            and not expired(meta, self.clock.now(), self.report_ttl_s)
        )

    async def status(self, job: str, tenant: str | None = None) -> JobStatus | None:
        if not self.visible(job, tenant):
            return None
        recs = self._job_records(await self.backend.records(job))
        return self._status(recs[0]) if recs else None

    async def list(self, limit: int = 100, tenant: str | None = None) -> list[JobStatus]:
        recs = self._job_records(await self.backend.records())
        recs = [r for r in recs if self.visible(r.job, tenant)]
        recs.sort(key=lambda r: r.queued_at or 0.0, reverse=True)
        return [self._status(r) for r in recs[:limit]]

    async def report(self, job: str, tenant: str | None = None) -> ReportModel | None:
        """The finished job's report, read back from the queue's recorded result."""
        if not self.visible(job, tenant):
            return None
        last = self.stage_names[-1]
        res = await self.backend.results(job, [last])
        if last not in res:
            return None
        return _recorded_report(res[last], staged=self.staged)

    # -- retention ----------------------------------------------------------
    async def _ended(self, job: str) -> None:
        """A job ended: record when, and delete its inputs (the report stays)."""
        self.index.ended(job, self.clock.now())
        await asyncio.to_thread(self.workspace.remove, job)

    async def purge_expired(self) -> tuple[str, ...]:
        """Forget jobs whose report is past its time; they then answer 404 to everyone.

        The queue backend keeps no delete, so the stored result row stays in
        its database; nothing serves it once the job is forgotten here.
        """
        now = self.clock.now()
        gone = [
            m.job for m in await asyncio.to_thread(self.index.all)
            if expired(m, now, self.report_ttl_s)
        ]  # fmt: skip
        for job in gone:
            self.index.forget(job)
            self.hub.forget(job)
            self._titles.pop(job, None)
            await asyncio.to_thread(self.workspace.remove, job)
        return tuple(gone)

    async def snapshot(self) -> PipelineView:
        """What the dashboard's pipeline view shows, in one read."""
        recs = self._job_records(await self.backend.records())
        by_state: dict[str, int] = {s.value: 0 for s in StageState}
        for r in recs:
            by_state[r.state.value] += 1
        in_stage = dict.fromkeys(STAGES, 0)
        for r in recs:
            if r.state is StageState.RUNNING:
                _, cur = stage_progress(self.hub.log(r.job))
                if cur in in_stage:
                    in_stage[cur] += 1
        view = PipelineView(
            queue=QueueView(
                stage=STAGE if not self.staged else "+".join(self.stage_names),
                depth=await self.depth(),
                capacity=self.capacity,
            ),
            workers=WorkerSlots(slots=self.workers, busy=self.runner.busy),
            stages=tuple(StageLoad(s, in_stage[s]) for s in STAGES),
            jobs=by_state,
            admission=Admissions(
                accepted=self.accepted,
                rejected=self.rejected,
                mean_run_s=round(self.run_times.mean_s, 3),
            ),
        )
        return replace(view, flow=self.flow()) if self.flow else view

    # -- workers ------------------------------------------------------------
    async def run(self) -> None:
        """Serve this process's worker slots until cancelled (none if ``workers`` is 0).

        With an event log, the relay also follows every job whose end the index has
        not recorded: one that ended while no API process ran gets its inputs deleted
        here, and its stream resumes (:meth:`JobEvents.follow`)."""
        if self.events.channel is not None:
            for meta in await asyncio.to_thread(self.index.all):
                if meta.ended_at is None:
                    self.hub.open(meta.job)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self._sweep())
            self.events.start(tg)
            if self.workers > 0:
                await self.runner.run()
            else:
                await asyncio.Event().wait()

    async def _sweep(self) -> None:
        while True:
            await self.clock.sleep(_SWEEP_S)
            await self.purge_expired()

    async def _failed(self, failure: StageFailure) -> None:
        """Say an attempt failed, as the store recorded it; once the store dead-lettered
        it (the stage raised on its last delivery, or its workers died holding it), the
        job has ended."""
        job = failure.message.job
        # one ``investigate`` job runs the whole agent: its events name the stage "run"
        stage = failure.message.stage if self.staged else "run"
        self.events.failed(job, stage, failure.error, final=failure.dead)
        if failure.dead:
            self.events.finish(job)
            await self._ended(job)

    def _staged_run(self, st: Stage, last: bool) -> StageFn:
        """A staged stage's run with the service's bookkeeping at the job's end (its
        failures come from the queue's failure hooks: :meth:`_failed`)."""

        async def run(ctx: StageContext) -> Mapping[str, Any]:
            job = ctx.job
            self.hub.open(job)
            result = await st.run(ctx)
            if last:
                rec = job_record(await self.backend.records(job), self.stage_names)
                if rec is not None and rec.queued_at is not None:
                    self.run_times.add(max(0.0, self.clock.now() - rec.queued_at))
                self.events.finish(job)
                await self._ended(job)
                if self.observer is not None:
                    # a report off the schema is not worth failing a finished run
                    with contextlib.suppress(KeyError, ValueError):
                        self.observer.run_finished(job, _recorded_report(result, staged=True))
            return result

        return run

    async def _investigate(self, ctx: StageContext) -> Mapping[str, Any]:
        job = ctx.job
        self.hub.open(job)
        if ctx.attempt > 1:
            self.events.note(job, f"attempt {ctx.attempt}")
        start = self.clock.now()
        report = await self.investigator(BugSpec.from_payload(ctx.input), self.events.sink(job))
        self.run_times.add(self.clock.now() - start)
        self.events.finish(job)
        await self._ended(job)
        if self.observer is not None:
            self.observer.run_finished(job, report)
        return report.model_dump(mode="json")  # the queue records the report as JSON


def _recorded_report(result: Mapping[str, Any], *, staged: bool) -> ReportModel:
    """The report in a last stage's recorded result (JSON: the queue's edge)."""
    return ReportModel.model_validate(result["report"] if staged else result)
