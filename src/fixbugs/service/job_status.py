"""What the service says about one job: its status and stages, or why a full queue refused it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentrt.queues import StageRecord, StageState
from fixbugs.run.driver import STAGES
from fixbugs.service.event_hub import JobLog

__all__ = ["JobStatus", "QueueFull", "ShareFull", "stage_progress"]


class QueueFull(Exception):
    """No room for the bug now (the API answers 429 with ``Retry-After``)."""

    reason = "the queue is full"

    def __init__(self, depth: int, retry_after_s: int) -> None:
        super().__init__(f"{self.reason} ({depth} bugs); retry after {retry_after_s} s")
        self.depth = depth
        self.retry_after_s = retry_after_s


class ShareFull(QueueFull):
    """The tenant's own share of the queue is full; other tenants still have room."""

    reason = "this tenant's share of the queue is full"


def stage_progress(log: JobLog | None) -> tuple[dict[str, str], str | None]:
    """Each agent stage's state (pending, running, done) from a job's events, and the current."""
    stages = dict.fromkeys(STAGES, "pending")
    current: str | None = None
    for _, ev in log.events if log else ():
        name = ev.get("stage")
        if name in stages and ev.get("kind") == "stage_started":
            stages[name] = "running"
            current = name
        elif name in stages and ev.get("kind") == "stage_finished":
            stages[name] = "done"
    running = [s for s, st in stages.items() if st == "running"]
    return stages, (running[-1] if running else current)


@dataclass(frozen=True, slots=True)
class JobStatus:
    id: str
    title: str
    state: str  # queued | running | done | failed | dead
    attempts: int
    queued_at: float | None
    started_at: float | None
    finished_at: float | None
    error: str | None
    stages: dict[str, str]  # agent stage -> pending | running | done
    current_stage: str | None

    @classmethod
    def of(cls, rec: StageRecord, title: str, log: JobLog | None) -> JobStatus:
        """The status of the job whose (folded) queue record is ``rec`` and events ``log``."""
        stages, current = stage_progress(log)
        return cls(
            id=rec.job,
            title=title,
            state=rec.state.value,
            attempts=rec.attempts,
            queued_at=rec.queued_at,
            started_at=rec.started_at,
            finished_at=rec.finished_at,
            error=rec.error,
            stages=stages,
            current_stage=current if rec.state is StageState.RUNNING else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """The status as JSON (the API's :class:`~.api_models.Status`)."""
        return {
            "id": self.id,
            "title": self.title,
            "state": self.state,
            "attempts": self.attempts,
            "queued_at": self.queued_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "error": self.error,
            "stages": self.stages,
            "current_stage": self.current_stage,
        }
