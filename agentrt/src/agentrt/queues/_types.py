"""What travels through a stage queue, and what is kept about it.

All values are frozen: a :class:`Message` may be delivered more than once
(delivery is at-least-once), so it must be a value a second worker can act
on exactly as the first did.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from agentrt._errors import AgentrtError
from agentrt._json import JsonObject

__all__ = [
    "Delivery",
    "Emit",
    "Message",
    "QueueUnavailable",
    "StageRecord",
    "StageState",
]


class QueueUnavailable(AgentrtError):
    """The queue's store cannot be reached right now (e.g. Redis restarting).

    Workers treat it as transient: they back off and retry the same
    operation, which every backend makes idempotent.
    """


@dataclass(frozen=True, slots=True)
class Message:
    """One item waiting for one stage.

    ``item`` is unique across the store; with ``stage`` it keys the stage's
    effect, which is recorded at most once whatever the deliveries. ``job``
    groups items for fairness; ``key`` names a resource (e.g. a repository's
    working tree) that a serializing stage must not touch twice at once.
    ``cost_s`` is the expected work left for this item from this stage on,
    from token math; the fairness policy sums it per job. ``group`` is who
    the job belongs to (a tenant, an owner): a stage shares its workers
    between groups before it chooses between a group's jobs
    (:class:`~agentrt.queues._fairness.GroupFair`). Every message of a job
    carries the job's group; ``""`` is a group like any other.
    """

    item: str
    stage: str
    job: str
    payload: JsonObject = field(default_factory=dict)
    key: str | None = None
    cost_s: float = 0.0
    group: str = ""


@dataclass(frozen=True, slots=True)
class Delivery:
    """A message handed to one consumer; ``receipt`` is the backend's handle.

    ``attempt`` counts deliveries of this item to this stage, 1-based,
    including deliveries to workers that died holding it.
    """

    message: Message
    receipt: str
    attempt: int
    consumer: str


@dataclass(frozen=True, slots=True)
class Emit:
    """A downstream message sent when the current stage's effect is recorded.

    The backend enqueues ``message`` only if every stage in ``requires`` has
    its effect recorded for the item once this one is (a join): the last
    upstream stage to finish sends it, exactly once.
    """

    message: Message
    requires: tuple[str, ...] = ()


class StageState(enum.StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"  # the last attempt raised; queued again for another
    DEAD = "dead"  # dead-lettered: out of attempts, needs a person


@dataclass(frozen=True, slots=True)
class StageRecord:
    """Where one item stands in one stage, with attempts and timings.

    Times are the backend clock's seconds (epoch seconds for durable stores,
    so records written by different processes compare).
    """

    item: str
    stage: str
    job: str
    state: StageState
    attempts: int = 0
    queued_at: float | None = None
    started_at: float | None = None
    finished_at: float | None = None
    error: str | None = None

    @property
    def wait_s(self) -> float | None:
        if self.queued_at is None or self.started_at is None:
            return None
        return self.started_at - self.queued_at

    @property
    def run_s(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at
