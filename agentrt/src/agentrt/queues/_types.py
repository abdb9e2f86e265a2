"""What travels through a stage queue, and what is kept about it.

All values are frozen: a :class:`Message` may be delivered more than once
(delivery is at-least-once), so it must be a value a second worker can act
on exactly as the first did.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agentrt._errors import AgentrtError
from agentrt._json import JsonObject

__all__ = [
    "Delivery",
    "Emit",
    "Message",
    "QueueStats",
    "QueueUnavailable",
    "StageRecord",
    "StageState",
    "StageStats",
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


def age_s(now: float, at: float | None) -> float | None:
    """Seconds from ``at`` to ``now``, never below 0 (clocks of other machines
    may run ahead of this one's); None when there is no ``at``."""
    return None if at is None else max(0.0, now - at)


@dataclass(frozen=True, slots=True)
class StageStats:
    """How one stage's queue stands at one instant: what an autoscaler reads.

    ``queued``: ready for a worker (never leased, given back, or leased by a
    worker whose lease ran out). ``in_flight``: leased to a worker now.
    ``dead``: dead-lettered, waiting for a person. ``oldest_age_s``: seconds
    since the oldest live (queued or in-flight) message entered the stage,
    by the backend's clock; None when the stage holds none.
    """

    stage: str
    queued: int = 0
    in_flight: int = 0
    dead: int = 0
    oldest_age_s: float | None = None

    @property
    def live(self) -> int:
        """Queued plus in flight: what :meth:`QueueBackend.depth` counts."""
        return self.queued + self.in_flight


@dataclass(frozen=True, slots=True)
class QueueStats:
    """Every asked-for stage's :class:`StageStats`, read in one go from the store."""

    stages: tuple[StageStats, ...]

    @classmethod
    def of(cls, found: Iterable[StageStats], stages: Sequence[str] | None) -> QueueStats:
        """Those of ``found`` that ``stages`` names, in its order (zeros for a
        stage the store holds nothing of); all of ``found`` by name when None."""
        by = {s.stage: s for s in found}
        if stages is None:
            return cls(tuple(by[k] for k in sorted(by)))
        return cls(tuple(by.get(k, StageStats(k)) for k in dict.fromkeys(stages)))

    def stage(self, name: str) -> StageStats:
        """``name``'s figures; zeros when it was not read."""
        return next((s for s in self.stages if s.stage == name), StageStats(name))

    @property
    def total(self) -> StageStats:
        """The sums over the stages, and the oldest age of any (stage ``""``)."""
        ages = [s.oldest_age_s for s in self.stages if s.oldest_age_s is not None]
        return StageStats(
            "",
            sum(s.queued for s in self.stages),
            sum(s.in_flight for s in self.stages),
            sum(s.dead for s in self.stages),
            max(ages) if ages else None,
        )
