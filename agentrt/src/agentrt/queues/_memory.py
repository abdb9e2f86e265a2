"""The in-memory backend: the reference semantics, for tests and one process.

Not durable: a crash loses everything. Every other backend must behave like
this one (tests run the same suite against each).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agentrt._clock import Clock, SystemClock
from agentrt._json import JsonObject
from agentrt.queues._failures import OUT_OF_DELIVERIES, FailureHooks, StageFailure
from agentrt.queues._fairness import Candidate, FairPolicy, GroupFair
from agentrt.queues._signal import ChangeSignal
from agentrt.queues._types import (
    Delivery,
    Emit,
    Message,
    QueueStats,
    StageRecord,
    StageState,
    StageStats,
    age_s,
)

__all__ = ["MemoryQueue"]


@dataclass(slots=True)
class _Entry:
    seq: int
    message: Message
    enqueued_at: float
    deliveries: int = 0
    consumer: str | None = None
    lease_until: float | None = None  # None: queued; else running until then


class MemoryQueue:
    def __init__(
        self,
        *,
        clock: Clock | None = None,
        max_deliveries: int = 5,
        policy: FairPolicy | None = None,
    ) -> None:
        self.clock: Clock = clock or SystemClock()
        self.max_deliveries = max_deliveries
        self.policy: FairPolicy = policy or GroupFair()
        self._seq = itertools.count(1)
        # (stage, group) -> the stage's claim ticket of the group's latest claim
        self._served: dict[tuple[str, str], int] = {}
        self._tickets = itertools.count(1)
        # invariant: _live holds exactly the queued and running messages
        self._live: dict[int, _Entry] = {}
        self._effects: dict[tuple[str, str], JsonObject] = {}
        self._records: dict[tuple[str, str], StageRecord] = {}
        self.dead: list[Message] = []
        self._signal = ChangeSignal(self.clock)
        self.failures = FailureHooks()

    # -- producers ----------------------------------------------------------
    async def put(self, message: Message) -> None:
        self._put(message)
        self._signal.notify()

    def _put(self, message: Message) -> None:
        now = self.clock.now()
        seq = next(self._seq)
        self._live[seq] = _Entry(seq, message, now)
        key = (message.item, message.stage)
        prev = self._records.get(key)
        self._records[key] = StageRecord(
            message.item,
            message.stage,
            message.job,
            StageState.QUEUED,
            attempts=prev.attempts if prev else 0,
            queued_at=now,
        )

    async def depth(self, stage: str, group: str | None = None) -> int:
        return sum(
            1
            for e in self._live.values()
            if e.message.stage == stage and (group is None or e.message.group == group)
        )

    async def pending(self) -> int:
        return len(self._live)

    async def stats(self, stages: Sequence[str] | None = None) -> QueueStats:
        """One pass over the live messages and the dead letters (it is the reference)."""
        now = self.clock.now()
        queued: Counter[str] = Counter()
        running: Counter[str] = Counter()
        oldest: dict[str, float] = {}
        for e in self._live.values():
            st = e.message.stage
            if e.lease_until is not None and e.lease_until > now:
                running[st] += 1
            else:
                queued[st] += 1
            oldest[st] = min(oldest.get(st, e.enqueued_at), e.enqueued_at)
        dead = Counter(m.stage for m in self.dead)
        found = (
            StageStats(s, queued[s], running[s], dead[s], age_s(now, oldest.get(s)))
            for s in set(queued) | set(running) | set(dead)
        )
        return QueueStats.of(found, stages)

    # -- consumers ----------------------------------------------------------
    async def claim(
        self, stage: str, consumer: str, *, lease_s: float, serialize: bool = False
    ) -> Delivery | None:
        while True:
            now = self.clock.now()
            entry = self._choose(stage, now, serialize)
            if entry is None:
                return None
            entry.deliveries += 1
            if entry.deliveries > self.max_deliveries:
                error = OUT_OF_DELIVERIES
                self._dead_letter(entry, error)
                last = entry.deliveries - 1  # the delivery whose worker died holding it
                await self.failures.report(
                    StageFailure(entry.message, last, error, StageState.DEAD)
                )
                continue
            entry.consumer = consumer
            entry.lease_until = now + lease_s
            m = entry.message
            self._served[(stage, m.group)] = next(self._tickets)
            self._records[(m.item, m.stage)] = replace(
                self._records[(m.item, m.stage)],
                state=StageState.RUNNING,
                attempts=entry.deliveries,
                started_at=now,
            )
            return Delivery(m, str(entry.seq), entry.deliveries, consumer)

    def _choose(self, stage: str, now: float, serialize: bool) -> _Entry | None:
        held: set[str] = set()
        if serialize:
            held = {
                e.message.key
                for e in self._live.values()
                if e.message.stage == stage
                and e.message.key is not None
                and e.lease_until is not None
                and e.lease_until > now
            }
        first: dict[str, _Entry] = {}
        remaining: dict[str, float] = {}
        running: dict[str, int] = {}
        for e in self._live.values():  # dict order is seq order
            m = e.message
            remaining[m.job] = remaining.get(m.job, 0.0) + m.cost_s
            if m.stage != stage:
                continue
            if e.lease_until is not None and e.lease_until > now:
                running[m.group] = running.get(m.group, 0) + 1
                continue
            if m.job in first:
                continue
            if m.key is not None and m.key in held:
                continue
            first[m.job] = e
        cands = [
            Candidate(
                j,
                e.seq,
                remaining[j],
                e.enqueued_at,
                e.message.group,
                running.get(e.message.group, 0),
                self._served.get((stage, e.message.group), 0),
            )
            for j, e in first.items()
        ]
        chosen = self.policy.choose(cands, now)
        return None if chosen is None else self._live[chosen.seq]

    def _entry(self, delivery: Delivery) -> _Entry | None:
        e = self._live.get(int(delivery.receipt))
        # a lease that was taken over belongs to the new consumer
        if e is None or e.consumer != delivery.consumer or e.deliveries != delivery.attempt:
            return None
        return e

    async def extend(self, delivery: Delivery, lease_s: float) -> None:
        e = self._entry(delivery)
        if e is not None:
            e.lease_until = self.clock.now() + lease_s

    async def complete(
        self, delivery: Delivery, result: JsonObject, emits: Sequence[Emit] = ()
    ) -> bool:
        m = delivery.message
        key = (m.item, m.stage)
        applied = key not in self._effects
        if applied:
            self._effects[key] = dict(result)
            for emit in emits:
                if all((m.item, s) in self._effects for s in emit.requires):
                    self._put(emit.message)
            rec = self._records[key]
            self._records[key] = replace(
                rec, state=StageState.DONE, finished_at=self.clock.now(), error=None
            )
        # acknowledge whichever delivery this is: the message is finished
        for seq, e in list(self._live.items()):
            if e.message.item == m.item and e.message.stage == m.stage:
                del self._live[seq]
        self._signal.notify()
        return applied

    async def fail(self, delivery: Delivery, error: str) -> StageState:
        e = self._entry(delivery)
        m = delivery.message
        if e is None:
            return self._records[(m.item, m.stage)].state
        if e.deliveries >= self.max_deliveries:
            self._dead_letter(e, error)
            state = StageState.DEAD
        else:
            e.lease_until = None
            e.consumer = None
            self._records[(m.item, m.stage)] = replace(
                self._records[(m.item, m.stage)],
                state=StageState.FAILED,
                finished_at=self.clock.now(),
                error=error,
            )
            state = StageState.FAILED
        self._signal.notify()
        await self.failures.report(StageFailure(m, delivery.attempt, error, state))
        return state

    def _dead_letter(self, e: _Entry, error: str) -> None:
        del self._live[e.seq]
        self.dead.append(e.message)
        m = e.message
        self._records[(m.item, m.stage)] = replace(
            self._records[(m.item, m.stage)],
            state=StageState.DEAD,
            attempts=min(e.deliveries, self.max_deliveries),
            finished_at=self.clock.now(),
            error=error,
        )

    # -- queries ------------------------------------------------------------
    async def results(self, item: str, stages: Sequence[str]) -> dict[str, JsonObject]:
        return {s: dict(self._effects[(item, s)]) for s in stages if (item, s) in self._effects}

    async def effects(self) -> list[tuple[str, str]]:
        """Every (item, stage) whose effect is recorded."""
        return list(self._effects)

    async def records(self, job: str | None = None) -> list[StageRecord]:
        return [r for r in self._records.values() if job is None or r.job == job]

    async def wait(self, timeout_s: float) -> None:
        await self._signal.wait(timeout_s)

    async def aclose(self) -> None:
        self._signal.notify()
