"""Which queued message a stage serves next: fairness between groups, then jobs.

A pure function of the candidates and the time, so every backend orders
the same way and tests check the order without running anything. One
candidate per job (its oldest claimable message): within a job, FIFO.
Each candidate also carries its group's standing in the stage (how many
of the group's messages run there, and when the stage last served the
group), which the backend reads from its store in the same step as the
candidates: :class:`GroupFair` shares the workers between groups with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["Candidate", "FairPolicy", "Fifo", "GroupFair", "ShortestJobFirst"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A job's oldest claimable message in a stage.

    ``job_remaining_s`` is the job's expected work left across all stages
    (the sum of its live messages' ``cost_s``); ``seq`` is the store's
    enqueue order, the tie-breaker. ``group`` is the job's group;
    ``group_running`` counts the group's messages leased in this stage now,
    and ``group_served`` is the stage's claim ticket of the group's latest
    claim (tickets only grow; 0: never served). All candidates of one
    group carry the same two figures.
    """

    job: str
    seq: int
    job_remaining_s: float
    enqueued_at: float
    group: str = ""
    group_running: int = 0
    group_served: int = 0


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


@dataclass(frozen=True, slots=True)
class GroupFair:
    """Groups take turns for a stage's workers; ``within`` chooses the group's job.

    The next group is the one with the fewest messages running in the stage,
    then the one the stage served least recently (never served: first). So
    with one worker the groups with work alternate, and with many, groups
    with work hold equal shares of the slots. However many jobs the other
    groups queue, a group running nothing in the stage waits only for the
    groups that also run nothing there and were served less recently than
    it (or, like it, never): one claim each. Groups tied on both (e.g. none
    served yet) are chosen between by ``within`` over all their candidates:
    with a single group (every message in ``""``) this policy is exactly
    ``within``.
    """

    within: FairPolicy = field(default_factory=ShortestJobFirst)

    def choose(self, candidates: Sequence[Candidate], now: float) -> Candidate | None:
        if not candidates:
            return None
        best = min((c.group_running, c.group_served) for c in candidates)
        tied = [c for c in candidates if (c.group_running, c.group_served) == best]
        return self.within.choose(tied, now)
