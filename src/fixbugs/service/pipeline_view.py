"""The service at one moment, as the pipeline view shows it: queue, workers, stages, admission."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from agentrt.observability import FlowState

__all__ = ["Admissions", "PipelineView", "QueueView", "StageLoad", "WorkerSlots"]


@dataclass(frozen=True, slots=True)
class QueueView:
    stage: str  # the queue stage, or the staged pipeline's stages joined by "+"
    depth: int  # bugs queued or running
    capacity: int


@dataclass(frozen=True, slots=True)
class WorkerSlots:
    slots: int
    busy: int


@dataclass(frozen=True, slots=True)
class StageLoad:
    name: str  # an agent stage
    running: int  # bugs running it now


@dataclass(frozen=True, slots=True)
class Admissions:
    accepted: int
    rejected: int
    mean_run_s: float


@dataclass(frozen=True, slots=True)
class PipelineView:
    """One read of the service for ``GET /v1/pipeline``, the dashboard and ``/metrics``."""

    queue: QueueView
    workers: WorkerSlots
    stages: tuple[StageLoad, ...]
    jobs: Mapping[str, int]  # queue state -> bugs in it
    admission: Admissions
    flow: FlowState = field(default_factory=lambda: FlowState((), None))

    def to_dict(self) -> dict[str, Any]:
        """The JSON the API answers; ``sessions`` repeats the worker slots for the dashboard."""
        return {
            "queue": asdict(self.queue),
            "workers": asdict(self.workers),
            "sessions": {"held": self.workers.busy, "capacity": self.workers.slots},
            "stages": [asdict(s) for s in self.stages],
            "jobs": dict(self.jobs),
            "flow": self.flow.to_dict(),
            "admission": asdict(self.admission),
        }
