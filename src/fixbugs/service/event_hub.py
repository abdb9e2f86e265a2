"""Each job's progress events, kept for late readers and pushed to live ones.

The server-sent-event stream of a job replays what happened so far and
then follows new events; a reader that reconnects with ``Last-Event-ID``
resumes where it stopped (:func:`resume_after` reads that header, which the
client controls, and refuses anything but a plain event number). Memory is
bounded twice: a job keeps at most
``max_events`` events (the oldest notes go first; stage changes are kept),
and at most ``max_jobs`` finished jobs are kept, oldest dropped first.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from agentrt import Clock
from agentrt.queues import ChangeSignal
from fixbugs.errors import InputError

__all__ = ["EventHub", "JobLog", "resume_after"]

_MAX_ID_DIGITS = 18  # any seq this hub hands out, and an int64 for every client

# kinds a watcher needs to draw the pipeline; never dropped to save memory
_KEEP = frozenset({"run_started", "stage_started", "stage_finished", "run_finished", "failed"})


def resume_after(last_event_id: str | None) -> int:
    """The seq a stream resumes after, from ``Last-Event-ID`` (absent: from the start).

    Only ASCII digits: ``str.isdigit`` also takes ``²`` (which ``int`` then
    refuses), and ``int`` refuses a 5,000-digit value too; both were 500s.
    """
    if last_event_id is None:
        return 0
    if not (
        0 < len(last_event_id) <= _MAX_ID_DIGITS
        and last_event_id.isascii()
        and last_event_id.isdigit()
    ):
        shown = last_event_id if len(last_event_id) <= 40 else last_event_id[:40] + "..."
        raise InputError(
            f"Last-Event-ID {shown!r} is not an event number"
            f" (ASCII digits, at most {_MAX_ID_DIGITS})"
        )
    return int(last_event_id)


@dataclass(slots=True)
class JobLog:
    """One job's events in order; ``seq`` numbers are 1-based and never reused."""

    events: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    finished: bool = False
    next_seq: int = 1


class EventHub:
    def __init__(self, clock: Clock, *, max_events: int = 500, max_jobs: int = 1000) -> None:
        self.clock = clock
        self.max_events = max_events
        self.max_jobs = max_jobs
        self._logs: OrderedDict[str, JobLog] = OrderedDict()
        self._signal = ChangeSignal(clock)
        self._ids = itertools.count()

    def log(self, job: str) -> JobLog | None:
        return self._logs.get(job)

    def open(self, job: str) -> None:
        self._logs.setdefault(job, JobLog())
        self._evict()

    def publish(self, job: str, event: dict[str, Any]) -> int:
        log = self._logs.setdefault(job, JobLog())
        seq = log.next_seq
        log.next_seq += 1
        log.events.append((seq, event))
        if len(log.events) > self.max_events:
            self._trim(log)
        self._signal.notify()
        return seq

    def finish(self, job: str) -> None:
        log = self._logs.setdefault(job, JobLog())
        log.finished = True
        self._evict()
        self._signal.notify()

    def forget(self, job: str) -> None:
        """Drop a job's events (its retention ended)."""
        self._logs.pop(job, None)

    def _trim(self, log: JobLog) -> None:
        # drop the oldest event that is not a stage change; if all are, the oldest
        for i, (_, ev) in enumerate(log.events):
            if ev.get("kind") not in _KEEP:
                del log.events[i]
                return
        del log.events[0]

    def _evict(self) -> None:
        while len(self._logs) > self.max_jobs:
            victim = next((j for j, log in self._logs.items() if log.finished), None)
            if victim is None:
                return
            del self._logs[victim]

    async def follow(
        self, job: str, after: int = 0, *, heartbeat_s: float = 15.0
    ) -> AsyncIterator[tuple[int, dict[str, Any]] | None]:
        """Events of ``job`` with seq > ``after``, then new ones until it finishes.

        Yields ``None`` when ``heartbeat_s`` passed with nothing new, so the
        stream can send a keep-alive comment (and notice a gone client).
        """
        while True:
            log = self._logs.get(job)
            if log is None:
                return
            fresh = [(s, e) for s, e in log.events if s > after]
            for s, e in fresh:
                yield s, e
                after = s
            if log.finished and not fresh:
                return
            if not fresh:
                before = log.next_seq
                await self._signal.wait(heartbeat_s)
                if log.next_seq == before and not log.finished:
                    yield None
