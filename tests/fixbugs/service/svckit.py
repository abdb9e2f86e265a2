"""Service test kit: whole reports, a scripted agent, a service on an in-memory queue.

The scripted agent runs either way the service does: on the stage queues,
``fixbugs serve``'s default (:meth:`ScriptedInvestigator.staged`, the
queue stages of :mod:`fixbugs.queued` by name), or as one whole-bug job
(the :class:`ScriptedInvestigator` itself). The service's tests here and the
security suite's service tests (``tests/security``) share it;
``[tool.pytest.ini_options] pythonpath`` puts this folder on ``sys.path``.
"""

from __future__ import annotations

import asyncio
import io
import tarfile
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
from fastapi import FastAPI

from agentrt import Clock, FakeClock
from agentrt.metrics import CallRecord
from agentrt.pipeline import Pipeline, Stage, StageContext
from agentrt.queues import MemoryQueue
from agentrt.sim import StreamingASGITransport
from fixbugs.queued import QUEUE_STAGES, Publish
from fixbugs.run.driver import STAGES
from fixbugs.run.progress import EventSink, ProgressEvent, RunFinishedData
from fixbugs.run.report_schema import ReportModel
from fixbugs.service import BugSpec, Investigator, JobService, ServiceTelemetry, Workspace
from fixbugs.service.job_files import Limits

# the agent's stages in the order a run goes through them, as a client must see them
STAGE_ORDER = ("analysis", "file_relevance", "reproduction", "root_cause", "fix", "validation")

# ``fixbugs serve``'s two modes: the stage queues (its default) and whole-bug jobs
Mode = Literal["staged", "whole-bug"]
MODES: tuple[Mode, ...] = ("staged", "whole-bug")
# the agent's stages each queue stage runs (fixbugs.queued.pipeline)
_IN_QUEUE_STAGE = {
    "analysis": ("analysis", "file_relevance"),
    "reproduction": ("reproduction",),
    "root_cause": ("root_cause", "fix"),
    "repair": ("validation",),
}
assert tuple(_IN_QUEUE_STAGE) == QUEUE_STAGES


def tar_gz(members: Mapping[str, bytes] | Iterable[tuple[str, bytes | None]]) -> bytes:
    """A .tar.gz of ``members`` (name, content) in order; ``None`` content: a directory entry."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items() if isinstance(members, Mapping) else members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def whole_report(title: str, *, validated: bool = False, **extra: Any) -> ReportModel:
    """A whole report (the report route answers with the published model); ``extra``: more keys."""
    return ReportModel.model_validate(
        {
            "title": title,
            "ranked_files": [],
            "root_cause": None,
            "patch": None,
            "validated": validated,
            "validation": {"summary": "not run", "tried": 0},
            "reproduction": {"command": None, "origin": "none", "confirmed": False, "summary": "-"},
            "first_hypothesis_s": None,
            "total_s": 0.0,
            "stages": {},
            **extra,
        }
    )


@dataclass
class ScriptedInvestigator:
    """Emits the six stages; waits at ``hold`` (if set) before each stage.

    Called, it runs a whole bug (the whole-bug mode); :meth:`staged` runs
    the same script on the stage queues, each queue stage emitting its
    agent stages and the last one failing (``fail``) or recording the report.
    """

    hold: asyncio.Event | None = None
    fail: bool = False
    specs: list[BugSpec] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)

    def _start(self, spec: BugSpec, emit: EventSink) -> None:
        self.specs.append(spec)
        self.started.set()
        emit(ProgressEvent("run_started", "run", 0.0, "investigating"))

    async def _stages(self, names: Iterable[str], emit: EventSink) -> list[dict[str, Any]]:
        events = []
        for s in names:
            if self.hold is not None:
                await self.hold.wait()
            for kind in ("stage_started", "stage_finished"):
                i = STAGES.index(s)  # type: ignore[arg-type]
                ev = ProgressEvent(kind, s, float(i), f"{s} {kind}")  # type: ignore[arg-type]
                emit(ev)
                events.append(ev.to_dict())
        return events

    def _finish(self, spec: BugSpec, emit: EventSink, events: list[dict[str, Any]]) -> ReportModel:
        if self.fail:
            raise RuntimeError("scripted failure")
        call = CallRecord(
            "analysis",
            "model",
            "fake",
            0.1,
            0.5,
            ttft_s=0.2,
            input_tokens=10,
            output_tokens=20,
            attempts=2,
        )
        emit(ProgressEvent("run_finished", "run", 6.0, "done", RunFinishedData(validated=True)))
        return whole_report(
            spec.title,
            validated=True,
            validation={"summary": "scripted", "tried": 1},
            total_s=6.0,
            stages={s: {"wall_s": 1.0, "ttft_s": None} for s in STAGES},
            calls=[call.to_dict()],
            events=events,
        )

    async def __call__(self, spec: BugSpec, sink: EventSink) -> ReportModel:
        self._start(spec, sink)
        events = await self._stages(STAGES, sink)
        return self._finish(spec, sink, events)

    def staged(self, publish: Publish, *, capacity: int = 16) -> ScriptedStages:
        """The script on the stage queues, its events to ``publish`` (as the staged agent's)."""
        return ScriptedStages(self, publish, capacity)


@dataclass
class ScriptedStages:
    """A :class:`ScriptedInvestigator` as the staged agent: its queue stages, by name."""

    script: ScriptedInvestigator
    publish: Publish
    capacity: int

    def pipeline(self) -> Pipeline:
        stages, after = [], ()
        for name in QUEUE_STAGES:
            stages.append(Stage(name, self._run, after=after, lease_s=60.0, capacity=self.capacity))
            after = (name,)
        return Pipeline(stages, name="scripted-staged", capacity=self.capacity)

    async def _run(self, ctx: StageContext) -> Mapping[str, Any]:
        spec = BugSpec.from_payload(ctx.input)

        def emit(ev: ProgressEvent) -> None:
            self.publish(ctx.job, ev.to_dict())

        if ctx.stage == QUEUE_STAGES[0] and ctx.attempt == 1:
            self.script._start(spec, emit)
        events = await self.script._stages(_IN_QUEUE_STAGE[ctx.stage], emit)
        # each stage's effect carries the events so far, as the staged record does
        before = [e for up in ctx.upstream.values() for e in up.get("events", ())]
        if ctx.stage != QUEUE_STAGES[-1]:
            return {"events": before + events}
        return {"report": self.script._finish(spec, emit, before + events).model_dump(mode="json")}


def memory_service(
    root: Path,
    investigator: Investigator,
    *,
    clock: Clock | None = None,
    capacity: int = 8,
    workers: int = 1,
    max_deliveries: int = 1,
    limits: Limits | None = None,
    **kw: Any,
) -> JobService:
    """A :class:`JobService` on an in-memory queue (on a :class:`FakeClock` unless given one).

    ``investigator`` runs each bug as one job (the whole-bug mode), unless
    ``staged`` (in ``kw``) puts the bugs on queue stages."""
    clock = clock or FakeClock()
    return JobService(
        MemoryQueue(clock=clock, max_deliveries=max_deliveries),
        investigator,
        Workspace(root, limits),
        clock=clock,
        capacity=capacity,
        workers=workers,
        **kw,
    )


@asynccontextmanager
async def in_process(
    app: FastAPI, service: JobService, *, base_url: str = "http://test", workers: bool = True
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of ``app`` in this process; with ``workers``, the service's workers run."""
    transport = StreamingASGITransport(app, raise_app_exceptions=False)
    async with (
        httpx.AsyncClient(transport=transport, base_url=base_url) as client,
        asyncio.TaskGroup() as tg,
    ):
        running = tg.create_task(service.run()) if workers else None
        yield client
        if running is not None:
            running.cancel()


@dataclass
class InProcess:
    """A client of an app in this process, its service and the service's clock."""

    client: httpx.AsyncClient
    service: JobService
    clock: FakeClock


@dataclass
class Harness:
    service: JobService
    client: httpx.AsyncClient
    investigator: ScriptedInvestigator
    telemetry: ServiceTelemetry
    mode: Mode = "staged"


def make_service(
    root: Path,
    investigator: ScriptedInvestigator,
    *,
    mode: Mode = "staged",
    capacity: int = 4,
    workers: int = 1,
    limits: Limits | None = None,
) -> tuple[JobService, ServiceTelemetry]:
    """The scripted service in ``mode``: ``fixbugs serve``'s default, the stage queues, or
    whole-bug jobs."""
    telemetry = ServiceTelemetry()

    def staged(publish: Publish) -> ScriptedStages:
        return investigator.staged(publish, capacity=capacity)

    service = memory_service(
        root,
        investigator,
        capacity=capacity,
        workers=workers,
        max_deliveries=2,
        limits=limits,
        observer=telemetry,
        flow=telemetry.flow,
        staged=staged if mode == "staged" else None,
    )
    return service, telemetry
