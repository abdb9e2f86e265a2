"""Durable stage queues: at-least-once delivery, effects recorded exactly once.

Backends behind one interface (:class:`QueueBackend`): in-memory for tests,
SQLite as the embedded default, Redis Streams for workers on many machines.
Pick one by URL with :func:`open_queue`.
"""

from agentrt.queues.backend import ChangeSignal, QueueBackend, open_queue
from agentrt.queues.epoch import EpochClock
from agentrt.queues.fairness import Candidate, FairPolicy, Fifo, GroupFair, ShortestJobFirst
from agentrt.queues.memory import MemoryQueue
from agentrt.queues.sqlite import SqliteQueue
from agentrt.queues.types import (
    Delivery,
    Emit,
    Message,
    QueueUnavailable,
    StageRecord,
    StageState,
)

__all__ = [
    "Candidate",
    "ChangeSignal",
    "Delivery",
    "Emit",
    "EpochClock",
    "FairPolicy",
    "Fifo",
    "GroupFair",
    "MemoryQueue",
    "Message",
    "QueueBackend",
    "QueueUnavailable",
    "ShortestJobFirst",
    "SqliteQueue",
    "StageRecord",
    "StageState",
    "open_queue",
]
