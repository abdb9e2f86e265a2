"""The order candidates are validated in, which follow-ups may join while it is consumed.

Validation takes candidates best first. A candidate that moved the
failure forward (:mod:`fixbugs.repair.stepping`) adds follow-ups built on
it: *urgent* ones (the failing test got further) go before every candidate
not yet taken, the others one by one between the next candidates, so a
weak sign costs the search a share of its budget, not all of it.

Taking is synchronous (the scatter's workers call ``next`` in the event
loop), so each candidate is taken exactly once; its *order* is the number
of candidates taken before it, the position a sequential run gives it.
Follow-ups may name a candidate already queued (a second edit tried alone
that two seeds share): it is taken once, at the earliest place it holds,
and never again once taken. A worker that finds the queue empty ends:
follow-ups that join after that run on the workers still going (with
hundreds of candidates ranked, the queue is rarely empty while a seed is
still running).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from fixbugs.repair.ranking import RepairCandidate

__all__ = ["CandidateQueue", "FollowUps"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FollowUps:
    """Candidates built on one that moved the failure forward, best first."""

    candidates: tuple[RepairCandidate, ...]
    urgent: bool  # before every candidate not yet taken (else one by one between them)


class CandidateQueue(Generic[T]):
    """Candidates by key (their rank first), handed out as ``(order, candidate)``.

    ``ident`` names a candidate (a repair candidate's id): entries of the
    same name are one candidate, taken once.
    """

    def __init__(self, items: Iterable[T], ident: Callable[[T], Hashable]) -> None:
        self._seq = itertools.count()
        self._ident = ident
        # invariant: heap entries are (key, tie, item); originals have keys 0, 1, 2, ...
        self._heap: list[tuple[float, int, T]] = [
            (float(i), next(self._seq), item) for i, item in enumerate(items)
        ]
        heapq.heapify(self._heap)
        self._named = {ident(item) for _, _, item in self._heap}  # every name ever queued
        self._done: set[Hashable] = set()  # the names of the candidates taken

    def __iter__(self) -> Iterator[tuple[int, T]]:
        return self

    def __next__(self) -> tuple[int, T]:
        while self._heap:
            _, _, item = heapq.heappop(self._heap)
            name = self._ident(item)
            if name in self._done:
                continue  # taken at an earlier place
            order = len(self._done)
            self._done.add(name)
            return order, item
        raise StopIteration

    @property
    def taken(self) -> int:
        return len(self._done)

    def __len__(self) -> int:
        """Candidates not yet taken."""
        return len({self._ident(item) for _, _, item in self._heap} - self._done)

    def add(self, items: Sequence[T], *, urgent: bool) -> list[T]:
        """``items`` (best first) before every candidate not yet taken, or between them.

        Returns those of a name not queued before: the candidates the search gained.
        """
        head = self._heap[0][0] if self._heap else 0.0
        n = len(items)
        new = []
        for k, item in enumerate(items):
            key = head - 1.0 + (k + 1) / (n + 1) if urgent else head + k + 0.5
            heapq.heappush(self._heap, (key, next(self._seq), item))
            name = self._ident(item)
            if name not in self._named:
                self._named.add(name)
                new.append(item)
        return new
