"""Service test kit: a scripted investigator and a service on an in-memory queue."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from agentrt import FakeClock
from agentrt.metrics import CallRecord
from agentrt.queues import MemoryQueue
from fixbugs.run.progress import EventSink, ProgressEvent
from fixbugs.service import JobService, ServiceTelemetry, Workspace
from fixbugs.service.workspace import Limits
from fixbugs.stages.driver import STAGES


@dataclass
class ScriptedInvestigator:
    """Emits the six stages; waits at ``hold`` (if set) before each stage."""

    hold: asyncio.Event | None = None
    fail: bool = False
    specs: list[Mapping[str, Any]] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, spec: Mapping[str, Any], sink: EventSink) -> dict[str, Any]:
        self.specs.append(spec)
        self.started.set()
        sink(ProgressEvent("run_started", "run", 0.0, "investigating"))
        events = []
        for i, s in enumerate(STAGES):
            if self.hold is not None:
                await self.hold.wait()
            for kind in ("stage_started", "stage_finished"):
                ev = ProgressEvent(kind, s, float(i), f"{s} {kind}")  # type: ignore[arg-type]
                sink(ev)
                events.append(ev.to_dict())
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
        sink(ProgressEvent("run_finished", "run", 6.0, "done"))
        return {  # a whole report: the report route answers with the published model
            "title": spec.get("title"),
            "ranked_files": [],
            "root_cause": None,
            "patch": None,
            "validated": True,
            "validation": {"summary": "scripted", "tried": 1},
            "reproduction": {"command": None, "origin": "none", "confirmed": False, "summary": "-"},
            "first_hypothesis_s": None,
            "total_s": 6.0,
            "stages": {s: {"wall_s": 1.0, "ttft_s": None} for s in STAGES},
            "calls": [call.to_dict()],
            "events": events,
        }


@dataclass
class Harness:
    service: JobService
    client: httpx.AsyncClient
    investigator: ScriptedInvestigator
    telemetry: ServiceTelemetry


def make_service(
    root: Path,
    investigator: ScriptedInvestigator,
    *,
    capacity: int = 4,
    workers: int = 1,
    limits: Limits | None = None,
) -> tuple[JobService, ServiceTelemetry]:
    clock = FakeClock()
    telemetry = ServiceTelemetry()
    service = JobService(
        MemoryQueue(clock=clock, max_deliveries=2),
        investigator,
        Workspace(root, limits),
        clock=clock,
        capacity=capacity,
        workers=workers,
        observer=telemetry,
        flow=telemetry.flow,
    )
    return service, telemetry
