"""Durable stage queues: at-least-once delivery, effects recorded exactly once.

Backends behind one interface (:class:`QueueBackend`): in-memory for tests,
SQLite as the embedded default, Redis Streams for workers on many machines.
Pick one by URL with :func:`open_queue`.
"""

from typing import TYPE_CHECKING

from agentrt.queues._backend import ChangeSignal, QueueBackend, open_queue
from agentrt.queues._epoch import EpochClock
from agentrt.queues._failures import FailureHook, FailureHooks, StageFailure
from agentrt.queues._fairness import Candidate, FairPolicy, Fifo, GroupFair, ShortestJobFirst
from agentrt.queues._memory import MemoryQueue
from agentrt.queues._sqlite import SqliteQueue
from agentrt.queues._types import (
    Delivery,
    Emit,
    Message,
    QueueStats,
    QueueUnavailable,
    StageRecord,
    StageState,
    StageStats,
)

if TYPE_CHECKING:
    from agentrt.queues._redis_streams import RedisQueue


def __getattr__(name: str) -> object:
    """The Redis backend needs redis (the ``redis`` extra): import it when asked for."""
    if name == "RedisQueue":
        from agentrt.queues._redis_streams import RedisQueue

        return RedisQueue
    raise AttributeError(f"module 'agentrt.queues' has no attribute {name!r}")


__all__ = [
    "Candidate",
    "ChangeSignal",
    "Delivery",
    "Emit",
    "EpochClock",
    "FailureHook",
    "FailureHooks",
    "FairPolicy",
    "Fifo",
    "GroupFair",
    "MemoryQueue",
    "Message",
    "QueueBackend",
    "QueueStats",
    "QueueUnavailable",
    "RedisQueue",
    "ShortestJobFirst",
    "SqliteQueue",
    "StageFailure",
    "StageRecord",
    "StageState",
    "StageStats",
    "open_queue",
]
