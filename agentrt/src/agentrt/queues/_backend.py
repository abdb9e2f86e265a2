"""The one interface every queue store implements, and how URLs pick one.

Delivery is at-least-once: a message is leased to one consumer and comes
back when the lease runs out (the consumer died) or the stage failed. The
*effect* of a stage — its result, and the downstream messages it sends — is
recorded exactly once per (item, stage): :meth:`QueueBackend.complete` does
both, plus the acknowledgement, in one atomic step of the store, and a
second completion of the same pair changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from agentrt._clock import Clock
from agentrt._errors import UserError
from agentrt._json import JsonObject
from agentrt.queues._failures import FailureHooks
from agentrt.queues._fairness import FairPolicy
from agentrt.queues._signal import ChangeSignal
from agentrt.queues._types import Delivery, Emit, Message, QueueStats, StageRecord, StageState

__all__ = ["ChangeSignal", "QueueBackend", "open_queue"]  # ChangeSignal: re-exported


@runtime_checkable
class QueueBackend(Protocol):
    """A durable (or not) set of stage queues with leases and recorded effects."""

    clock: Clock
    max_deliveries: int
    failures: FailureHooks  # told of each failure the store records (see _failures)

    async def put(self, message: Message) -> None:
        """Enqueue; never blocks (producers check :meth:`depth` for room first)."""
        ...

    async def depth(self, stage: str, group: str | None = None) -> int:
        """Live messages of ``stage``: queued plus running (of ``group`` only, if given)."""
        ...

    async def pending(self) -> int:
        """Live messages of every stage (dead-lettered ones excluded)."""
        ...

    async def stats(self, stages: Sequence[str] | None = None) -> QueueStats:
        """Per stage: queued, in flight, dead-lettered, and the oldest live message's age.

        ``stages``: those, in that order, with zeros for a stage the store
        holds nothing of; None: every stage the store holds live or
        dead-lettered messages of (Redis: every stage it has held). Read on
        every metrics scrape, so each backend keeps it cheap and says its cost.
        """
        ...

    async def claim(
        self, stage: str, consumer: str, *, lease_s: float, serialize: bool = False
    ) -> Delivery | None:
        """Lease the next message of ``stage`` to ``consumer``, or None if none is ready.

        With ``serialize``, a message whose key another lease of this stage
        holds is skipped. A message delivered ``max_deliveries`` times
        already is dead-lettered instead of delivered again.
        """
        ...

    async def extend(self, delivery: Delivery, lease_s: float) -> None:
        """Keep a lease alive while the stage is still working on it."""
        ...

    async def complete(
        self, delivery: Delivery, result: JsonObject, emits: Sequence[Emit] = ()
    ) -> bool:
        """Atomically record the effect, send ``emits``, acknowledge.

        Returns False when the effect was already recorded (a redelivery
        finished second): nothing is applied again, the delivery is just
        acknowledged.
        """
        ...

    async def fail(self, delivery: Delivery, error: str) -> StageState:
        """Give the message back for another attempt, or dead-letter it when out.

        Only the delivery's current holder fails it: for a lease taken over or
        an item finished meanwhile, nothing changes and the record's state is
        returned. What it records is told to :attr:`failures`, as is each
        message :meth:`claim` dead-letters.
        """
        ...

    async def results(self, item: str, stages: Sequence[str]) -> dict[str, JsonObject]:
        """The recorded effects of ``item`` in those of ``stages`` that have one."""
        ...

    async def records(self, job: str | None = None) -> list[StageRecord]:
        """Per-item, per-stage records (of one job, or all)."""
        ...

    async def wait(self, timeout_s: float) -> None:
        """Return when this process changed the store, or after ``timeout_s``."""
        ...

    async def aclose(self) -> None: ...


def open_queue(
    url: str,
    *,
    clock: Clock | None = None,
    max_deliveries: int = 5,
    policy: FairPolicy | None = None,
    namespace: str = "agentrt",
) -> QueueBackend:
    """A backend for ``url``: ``memory://``, ``sqlite:///PATH`` or ``redis://HOST:PORT/DB``.

    ``policy`` defaults to :class:`~agentrt.queues._fairness.GroupFair`
    (groups take turns, then shortest job first within a group).
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise UserError(
            f"queue URL {url!r} has no scheme; use memory://, sqlite:///PATH or redis://HOST:PORT"
        )
    if scheme == "memory":
        from agentrt.queues._memory import MemoryQueue

        return MemoryQueue(clock=clock, max_deliveries=max_deliveries, policy=policy)
    if scheme == "sqlite":
        from agentrt.queues._sqlite import SqliteQueue

        path = rest[1:] if rest.startswith("/") else rest
        if not path:
            raise UserError(f"queue URL {url!r} names no file; use sqlite:///PATH")
        return SqliteQueue(path, clock=clock, max_deliveries=max_deliveries, policy=policy)
    if scheme in {"redis", "rediss", "unix"}:
        from agentrt.queues._redis_streams import RedisQueue

        return RedisQueue(
            url, clock=clock, max_deliveries=max_deliveries, namespace=namespace, policy=policy
        )
    raise UserError(f"queue URL {url!r}: unknown scheme {scheme!r}; use memory, sqlite or redis")
