"""Whether a new bug may enter the queue, and if not, when to come back.

A pure function of the queue's state: the service answers 429 with
``Retry-After`` instead of growing the queue without bound (or failing).
The wait is the time for one running investigation to free its slot,
estimated from the mean of recent run times over the number of workers.
The same test bounds each tenant's own bugs by its share
(:func:`tenant_share`), so one tenant cannot fill the queue for all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Admitted", "Rejected", "RunTimes", "admit", "tenant_share"]


@dataclass(frozen=True, slots=True)
class Admitted:
    depth: int


@dataclass(frozen=True, slots=True)
class Rejected:
    depth: int
    retry_after_s: int


def admit(depth: int, capacity: int, *, workers: int, mean_run_s: float) -> Admitted | Rejected:
    """``depth`` counts queued plus running bugs; ``capacity`` bounds it."""
    if depth < capacity:
        return Admitted(depth)
    wait = mean_run_s / max(1, workers)
    return Rejected(depth, max(1, min(3600, math.ceil(wait))))


def tenant_share(capacity: int, tenants: int) -> int:
    """How many bugs one tenant may have queued or running, by default.

    With two tenants or more, half the capacity (rounded down): a tenant at
    its share then always leaves another at least as many places, so the
    other's bugs are admitted while the first's share is full, and the fair
    dequeue serves them ahead of the first's backlog. (The capacity minus
    the workers would leave the others only as many places as there are
    workers.) With one tenant, or none (a key-less local server), the whole
    capacity: a share would only leave the queue idle.
    """
    return capacity if tenants < 2 else max(1, capacity // 2)


class RunTimes:
    """Exponentially weighted mean of finished runs' seconds (``prior`` until one finishes)."""

    def __init__(self, prior_s: float = 30.0, weight: float = 0.2) -> None:
        self.mean_s = prior_s
        self.weight = weight
        self.count = 0

    def add(self, seconds: float) -> None:
        self.count += 1
        w = 1.0 if self.count == 1 else self.weight
        self.mean_s += w * (max(0.0, seconds) - self.mean_s)
