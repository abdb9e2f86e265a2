"""Which queued message a stage serves next: fairness between jobs.

A pure function of the candidates and the time, so every backend orders
the same way and tests check the order without running anything. One
candidate per job (its oldest claimable message): within a job, FIFO.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Candidate", "FairPolicy", "Fifo", "ShortestJobFirst"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A job's oldest claimable message in a stage.

    ``job_remaining_s`` is the job's expected work left across all stages
    (the sum of its live messages' ``cost_s``); ``seq`` is the store's
    enqueue order, the tie-breaker.
    """

    job: str
    seq: int
    job_remaining_s: float
    enqueued_at: float


class FairPolicy(Protocol):
    def choose(self, candidates: Sequence[Candidate], now: float) -> Candidate | None: ...


@dataclass(frozen=True, slots=True)
class Fifo:
    """Oldest message first: one big job ahead of small ones delays them all."""

    def choose(self, candidates: Sequence[Candidate], now: float) -> Candidate | None:
        return min(candidates, key=lambda c: c.seq, default=None)


@dataclass(frozen=True, slots=True)
class ShortestJobFirst:
    """Shortest expected remaining work first, between jobs, with aging.

    Score = job's remaining expected seconds − ``aging`` × seconds waited;
    lowest first. Small jobs pass an expensive one, and because the score of
    a waiting message falls without bound, every message is eventually
    first: a job with W more seconds of work than the rest waits at most
    about W / ``aging`` seconds past them.
    """

    aging: float = 0.1

    def __post_init__(self) -> None:
        if self.aging <= 0:
            raise ValueError("aging must be positive, or big jobs could wait forever")

    def score(self, c: Candidate, now: float) -> float:
        return c.job_remaining_s - self.aging * max(0.0, now - c.enqueued_at)

    def choose(self, candidates: Sequence[Candidate], now: float) -> Candidate | None:
        return min(candidates, key=lambda c: (self.score(c, now), c.seq), default=None)
