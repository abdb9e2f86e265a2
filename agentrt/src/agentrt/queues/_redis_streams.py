"""Redis Streams backend: stage queues shared by workers on many machines.

A queued message waits in a per-stage *waiting set* (a sorted set of
sequence numbers, plus a hash of the entries), not yet in the stream: so a
claim can choose which one to serve. The claimer reads the waiting
entries, lets the fairness policy (:mod:`agentrt.queues._fairness`, the same
one the SQLite and in-memory backends use) pick one per job's oldest, and
one Lua script moves it into the stage's stream and reads it into the
consumer group for that consumer — atomically, so no other consumer can see
it in between, and a claimer that lost the race just picks again.

From there, one consumer group per stage stream. A worker that dies leaves
its entries in the group's pending list; after a lease's worth of idle time
another worker takes them over with XAUTOCLAIM (Redis counts the
deliveries; past ``max_deliveries`` an entry goes to the dead-letter
stream). Completion is one Lua script — record the effect with HSETNX, put
the downstream entries in their waiting sets, XACK and XDEL — so it is
atomic, and a second completion of the same (item, stage) applies nothing.
A failed attempt goes back to the waiting set. All keys share the hash tag
``{namespace}`` so the scripts also run on a cluster.

A job's remaining work (the sum of its live messages' ``cost_s``, which
:class:`~agentrt.queues._fairness.ShortestJobFirst` weighs) is a counter
kept by the same scripts. A serializing stage skips waiting entries whose
key is locked, and holds a per-key lock (SET NX PX, renewed with the lease)
while it runs one. A group's standing in a stage, which
:class:`~agentrt.queues._fairness.GroupFair` weighs, is read with the
waiting entries (:mod:`agentrt.queues._redis_waiting`): its running count
from the stage's stream, its latest claim ticket from a hash that the
promotion script writes in the same step as it moves the entry.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions as rexc

from agentrt._checkpoint import cancel_requests, checkpoint
from agentrt._clock import Clock
from agentrt._json import JsonObject
from agentrt.queues import _redis_scripts as scripts
from agentrt.queues._epoch import EpochClock
from agentrt.queues._failures import OUT_OF_DELIVERIES, FailureHooks, StageFailure
from agentrt.queues._fairness import FairPolicy, GroupFair
from agentrt.queues._redis_keys import GROUP, SEP, RedisKeys, s_, unavailable
from agentrt.queues._redis_records import read_dead, read_effects, read_records, read_results
from agentrt.queues._redis_stats import read_stats
from agentrt.queues._redis_waiting import group_depth, read_stage
from agentrt.queues._signal import ChangeSignal
from agentrt.queues._types import Delivery, Emit, Message, QueueStats, StageRecord, StageState

__all__ = ["RedisQueue"]


class RedisQueue:
    def __init__(
        self,
        url: str,
        *,
        clock: Clock | None = None,
        max_deliveries: int = 5,
        namespace: str = "agentrt",
        policy: FairPolicy | None = None,
    ) -> None:
        self.url = url
        self.clock: Clock = clock or EpochClock()
        self.max_deliveries = max_deliveries
        self.policy: FairPolicy = policy or GroupFair()
        self.ns = "{" + namespace + "}"
        self.keys = RedisKeys(self.ns)
        # Any: redis-py types every command as sync-or-async; these are async
        self.r: Any = aioredis.Redis.from_url(url, socket_connect_timeout=2.0)
        self._complete_script = self.r.register_script(scripts.COMPLETE)
        self._fail_script = self.r.register_script(scripts.FAIL)
        self._promote_script = self.r.register_script(scripts.PROMOTE)
        self._start_script = self.r.register_script(scripts.START)
        self._stats_script = self.r.register_script(scripts.STATS)
        self._groups: set[str] = set()
        self._signal = ChangeSignal(self.clock)
        self.failures = FailureHooks()

    @property
    def dead_stream(self) -> str:
        return self.keys.dead

    async def _group(self, stage: str) -> str:
        stream = self.keys.stream(stage)
        if stage not in self._groups:
            try:
                # id 0: entries added before the group existed are still served
                await self.r.xgroup_create(stream, GROUP, id="0", mkstream=True)
            except rexc.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
            await self.r.sadd(self.keys.stages, stage)
            self._groups.add(stage)
        return stream

    # -- producers ----------------------------------------------------------
    @unavailable
    async def put(self, message: Message) -> None:
        m = message
        await self._group(m.stage)
        now = self.clock.now()
        rk = self.keys.rec(m.item, m.stage)
        seq = int(await self.r.incr(self.keys.seq))
        async with self.r.pipeline(transaction=True) as p:
            p.zadd(self.keys.waiting(m.stage), {str(seq): seq})
            p.hset(self.keys.waiting_entries(m.stage), str(seq), json.dumps(self._fields(m, now)))
            p.hincrbyfloat(self.keys.jobcost, m.job, m.cost_s)
            p.hset(
                rk,
                mapping={
                    "item": m.item,
                    "stage": m.stage,
                    "job": m.job,
                    "state": "queued",
                    "attempts": 0,
                    "queued_at": now,
                },
            )
            p.sadd(self.keys.records, rk)
            await p.execute()
        self._signal.notify()

    @staticmethod
    def _fields(m: Message, now: float) -> dict[str, str]:
        return {
            "item": m.item,
            "stage": m.stage,
            "job": m.job,
            "payload": json.dumps(dict(m.payload)),
            "key": m.key or "",
            "cost": repr(m.cost_s),
            "prior": "0",
            "at": repr(now),
            "group": m.group,
        }

    @unavailable
    async def depth(self, stage: str, group: str | None = None) -> int:
        if group is None:
            async with self.r.pipeline(transaction=False) as p:
                p.zcard(self.keys.waiting(stage))
                p.xlen(self.keys.stream(stage))
                waiting, running = await p.execute()
            return int(waiting) + int(running)
        return await group_depth(self.r, self.keys, stage, group)

    @unavailable
    async def pending(self) -> int:
        stages = [s_(s) for s in await self.r.smembers(self.keys.stages)]
        return sum([await self.depth(s) for s in stages])

    @unavailable
    async def stats(self, stages: Sequence[str] | None = None) -> QueueStats:
        """One script per read; its cost: :func:`~agentrt.queues._redis_stats.read_stats`."""
        return await read_stats(self.r, self.keys, self._stats_script, self.clock.now(), stages)

    # -- consumers ----------------------------------------------------------
    @unavailable
    async def claim(
        self, stage: str, consumer: str, *, lease_s: float, serialize: bool = False
    ) -> Delivery | None:
        stream = await self._group(stage)
        while True:
            got = await self._take(stream, consumer, lease_s)
            if got is None:
                got = await self._take_fair(stage, stream, consumer, serialize)
            if got is None:
                return None
            entry_id, fields, delivered = got
            f = {s_(k): s_(v) for k, v in fields.items()}
            m = Message(
                f["item"],
                f["stage"],
                f["job"],
                json.loads(f["payload"]),
                f["key"] or None,
                float(f["cost"]),
                f.get("group", ""),  # entries from before groups: group ""
            )
            attempt = int(f["prior"]) + delivered
            if attempt > self.max_deliveries:
                error = OUT_OF_DELIVERIES
                _, recorded = await self._fail_script(
                    keys=self._fail_keys(m),
                    args=[
                        GROUP,
                        entry_id,
                        "",
                        error,
                        self.clock.now(),
                        self.max_deliveries,
                        attempt - 1,
                    ],
                )
                if int(recorded):  # past max_deliveries, FAIL records it dead
                    await self.failures.report(StageFailure(m, attempt - 1, error, StageState.DEAD))
                continue
            d = Delivery(m, entry_id, attempt, consumer)
            if serialize and m.key is not None:
                await self._lock_key(d, lease_s)
            started = await self._start_script(
                keys=[self.keys.rec(m.item, m.stage), self.keys.effects, self.keys.stream(m.stage)],
                args=[f"{m.item}{SEP}{m.stage}", attempt, self.clock.now(), GROUP, entry_id],
            )
            if int(started) == 1:
                return d
            await self._unlock(d)  # its first holder completed it meanwhile: nothing to run

    def _fail_keys(self, m: Message) -> list[str]:
        return [
            self.keys.stream(m.stage),
            self.keys.rec(m.item, m.stage),
            self.dead_stream,
            self.keys.seq,
            self.keys.waiting(m.stage),
            self.keys.waiting_entries(m.stage),
            self.keys.jobcost,
            self.keys.dead_counts,
        ]

    async def _take_fair(
        self, stage: str, stream: str, consumer: str, serialize: bool
    ) -> tuple[str, dict[Any, Any], int] | None:
        """The waiting entry the fairness policy picks, moved into the stream for us."""
        while True:
            view = await read_stage(self.r, self.keys, stage)
            if not view.waiting:
                return None
            held: set[str] = set()
            if serialize:
                keys = sorted({e.key for e in view.waiting if e.key})
                if keys:
                    locks = await self.r.mget([self.keys.lock(stage, k) for k in keys])
                    held = {k for k, v in zip(keys, locks, strict=True) if v is not None}
            first = view.firsts(held)
            if not first:
                return None
            jobs = sorted(first)
            costs = await self.r.hmget(self.keys.jobcost, jobs)
            remaining = {
                j: max(0.0, float(s_(c))) if c else 0.0 for j, c in zip(jobs, costs, strict=True)
            }
            cands = view.candidates(first, remaining)
            chosen = self.policy.choose(cands, self.clock.now())
            assert chosen is not None
            reply = await self._promote_script(
                keys=[
                    self.keys.waiting(stage),
                    self.keys.waiting_entries(stage),
                    stream,
                    self.keys.served(stage),
                    self.keys.seq,
                ],
                args=[chosen.seq, GROUP, consumer],
            )
            for _, rows in reply or []:
                for entry_id, flat in rows:
                    fields = {flat[k]: flat[k + 1] for k in range(0, len(flat), 2)}
                    return s_(entry_id), fields, 1
            # another claimer took it first: choose again

    async def _take(
        self, stream: str, consumer: str, lease_s: float
    ) -> tuple[str, dict[Any, Any], int] | None:
        """An entry whose holder went quiet for a lease (new ones: :meth:`_take_fair`)."""
        start = "0-0"
        while True:
            cursor, claimed, *_ = await self.r.xautoclaim(
                stream, GROUP, consumer, int(lease_s * 1000), start, count=1
            )
            for entry_id, fields in claimed:
                if fields is None:
                    continue
                eid = s_(entry_id)
                info = await self.r.xpending_range(stream, GROUP, eid, eid, 1)
                delivered = int(info[0]["times_delivered"]) if info else 1
                return eid, fields, delivered
            start = s_(cursor)
            if start == "0-0":
                break
        # entries a put of an older version wrote straight into the stream
        resp = await self.r.xreadgroup(GROUP, consumer, {stream: ">"}, count=1)
        for _, entries in resp or []:
            for entry_id, fields in entries:
                return s_(entry_id), fields, 1
        return None

    async def _lock_key(self, d: Delivery, lease_s: float) -> None:
        assert d.message.key is not None
        lock = self.keys.lock(d.message.stage, d.message.key)
        seen = cancel_requests()
        while not await self.r.set(lock, d.receipt, nx=True, px=int(lease_s * 1000)):
            if s_(await self.r.get(lock) or b"") == d.receipt:
                return
            await self.extend(d, lease_s)
            checkpoint(seen)  # redis-py may lose a cancellation (see agentrt._checkpoint)
            await self.clock.sleep(min(0.05, lease_s / 4))

    async def _unlock(self, d: Delivery) -> None:
        if d.message.key is None:
            return
        lock = self.keys.lock(d.message.stage, d.message.key)
        if s_(await self.r.get(lock) or b"") == d.receipt:
            await self.r.delete(lock)

    @unavailable
    async def extend(self, delivery: Delivery, lease_s: float) -> None:
        stream = self.keys.stream(delivery.message.stage)
        # XCLAIM with min-idle 0 and JUSTID resets the idle time without
        # counting a delivery: the lease is renewed
        await self.r.xclaim(stream, GROUP, delivery.consumer, 0, [delivery.receipt], justid=True)
        if delivery.message.key is not None:
            lock = self.keys.lock(delivery.message.stage, delivery.message.key)
            if s_(await self.r.get(lock) or b"") == delivery.receipt:
                await self.r.pexpire(lock, int(lease_s * 1000))

    @unavailable
    async def complete(
        self, delivery: Delivery, result: JsonObject, emits: Sequence[Emit] = ()
    ) -> bool:
        m = delivery.message
        now = self.clock.now()
        keys = [
            self.keys.stream(m.stage),
            self.keys.effects,
            self.keys.records,
            self.keys.rec(m.item, m.stage),
            self.keys.seq,
            self.keys.jobcost,
        ]
        args: list[Any] = [
            GROUP,
            delivery.receipt,
            f"{m.item}{SEP}{m.stage}",
            json.dumps(dict(result)),
            repr(now),
            len(emits),
            m.job,
            repr(m.cost_s),
        ]
        for e in emits:
            em = e.message
            await self._group(em.stage)
            keys += [
                self.keys.waiting(em.stage),
                self.keys.waiting_entries(em.stage),
                self.keys.rec(em.item, em.stage),
            ]
            args += [
                em.item,
                em.stage,
                em.job,
                json.dumps(dict(em.payload)),
                em.key or "",
                repr(em.cost_s),
                len(e.requires),
                em.group,
            ]
            args += [f"{em.item}{SEP}{s}" for s in e.requires]
        applied = int(await self._complete_script(keys=keys, args=args)) == 1
        await self._unlock(delivery)
        self._signal.notify()
        return applied

    @unavailable
    async def fail(self, delivery: Delivery, error: str) -> StageState:
        m = delivery.message
        raw, recorded = await self._fail_script(
            keys=self._fail_keys(m),
            args=[
                GROUP,
                delivery.receipt,
                delivery.consumer,
                error,
                self.clock.now(),
                self.max_deliveries,
                delivery.attempt,
            ],
        )
        await self._unlock(delivery)
        self._signal.notify()
        state = StageState(s_(raw))
        if int(recorded):
            await self.failures.report(StageFailure(m, delivery.attempt, error, state))
        return state

    # -- queries ------------------------------------------------------------
    @unavailable
    async def results(self, item: str, stages: Sequence[str]) -> dict[str, JsonObject]:
        return await read_results(self.r, self.keys, item, stages)

    @unavailable
    async def effects(self) -> list[tuple[str, str]]:
        """Every (item, stage) whose effect is recorded."""
        return await read_effects(self.r, self.keys)

    @unavailable
    async def dead(self) -> list[Message]:
        return await read_dead(self.r, self.keys)

    @unavailable
    async def records(self, job: str | None = None) -> list[StageRecord]:
        return await read_records(self.r, self.keys, job)

    async def wait(self, timeout_s: float) -> None:
        await self._signal.wait(timeout_s)

    async def aclose(self) -> None:
        self._signal.notify()
        await self.r.aclose()
