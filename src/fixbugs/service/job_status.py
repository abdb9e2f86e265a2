"""What the service says about one job: its status, and the refusal of a full queue or share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["JobStatus", "QueueFull", "ShareFull"]


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

    def to_dict(self) -> dict[str, Any]:
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
