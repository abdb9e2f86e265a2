"""Whether a new bug may enter the queue, and if not, when to come back.

A pure function of the queue's state: the service answers 429 with
``Retry-After`` instead of growing the queue without bound (or failing).
The wait is the time for one running investigation to free its slot,
estimated from the mean of recent run times over the number of workers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Admitted", "Rejected", "RunTimes", "admit"]


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
