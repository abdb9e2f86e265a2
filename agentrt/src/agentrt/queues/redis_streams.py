"""Redis Streams backend: stage queues shared by workers on many machines.

A queued message waits in a per-stage *waiting set* (a sorted set of
sequence numbers, plus a hash of the entries), not yet in the stream: so a
claim can choose which one to serve. The claimer reads the waiting
entries, lets the fairness policy (:mod:`agentrt.queues.fairness`, the same
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
:class:`~agentrt.queues.fairness.ShortestJobFirst` weighs) is a counter
kept by the same scripts. A serializing stage skips waiting entries whose
key is locked, and holds a per-key lock (SET NX PX, renewed with the lease)
while it runs one.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, ParamSpec, TypeVar

import redis.asyncio as aioredis
import redis.exceptions as rexc

from agentrt.checkpoint import cancel_requests, checkpoint
from agentrt.clock import Clock
from agentrt.queues import redis_scripts as scripts
from agentrt.queues.epoch import EpochClock
from agentrt.queues.fairness import Candidate, FairPolicy, ShortestJobFirst
from agentrt.queues.signal import ChangeSignal
from agentrt.queues.types import (
    Delivery,
    Emit,
    Message,
    QueueUnavailable,
    StageRecord,
    StageState,
)

__all__ = ["RedisQueue"]

P = ParamSpec("P")
T = TypeVar("T")
GROUP = "agentrt"
SEP = "\x1f"


def _unavailable(
    fn: Callable[P, Coroutine[Any, Any, T]],
) -> Callable[P, Coroutine[Any, Any, T]]:
    """Turn "Redis is not there right now" into :class:`QueueUnavailable`."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await fn(*args, **kwargs)
        except (rexc.ConnectionError, rexc.TimeoutError, rexc.BusyLoadingError) as exc:
            raise QueueUnavailable(f"redis unavailable: {exc}") from exc
        except rexc.ResponseError as exc:
            if "NOGROUP" in str(exc):
                # the store lost its groups (a restart without persistence):
                # create them again on the retry
                groups = getattr(args[0] if args else None, "_groups", None)
                if isinstance(groups, set):
                    groups.clear()
                raise QueueUnavailable(f"redis lost its consumer groups: {exc}") from exc
            if "LOADING" in str(exc) or "MISCONF" in str(exc):
                raise QueueUnavailable(f"redis unavailable: {exc}") from exc
            raise

    return wrapper


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


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
        self.policy: FairPolicy = policy or ShortestJobFirst()
        self.ns = "{" + namespace + "}"
        # Any: redis-py types every command as sync-or-async; these are async
        self.r: Any = aioredis.Redis.from_url(url, socket_connect_timeout=2.0)
        self._complete_script = self.r.register_script(scripts.COMPLETE)
        self._fail_script = self.r.register_script(scripts.FAIL)
        self._promote_script = self.r.register_script(scripts.PROMOTE)
        self._start_script = self.r.register_script(scripts.START)
        self._groups: set[str] = set()
        self._signal = ChangeSignal(self.clock)

    # -- keys ---------------------------------------------------------------
    def _stream(self, stage: str) -> str:
        return f"{self.ns}:q:{stage}"

    def _waiting(self, stage: str) -> str:
        return f"{self.ns}:w:{stage}"

    def _waiting_entries(self, stage: str) -> str:
        return f"{self.ns}:wf:{stage}"

    @property
    def _seq(self) -> str:
        return f"{self.ns}:seq"

    @property
    def _jobcost(self) -> str:
        return f"{self.ns}:jobcost"

    def _rec(self, item: str, stage: str) -> str:
        return f"{self.ns}:r:{item}{SEP}{stage}"

    @property
    def _effects(self) -> str:
        return f"{self.ns}:effects"

    @property
    def _records(self) -> str:
        return f"{self.ns}:records"

    @property
    def _stages(self) -> str:
        return f"{self.ns}:stages"

    @property
    def dead_stream(self) -> str:
        return f"{self.ns}:dead"

    def _lock(self, stage: str, key: str) -> str:
        return f"{self.ns}:lock:{stage}:{key}"

    async def _group(self, stage: str) -> str:
        stream = self._stream(stage)
        if stage not in self._groups:
            try:
                # id 0: entries added before the group existed are still served
                await self.r.xgroup_create(stream, GROUP, id="0", mkstream=True)
            except rexc.ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
            await self.r.sadd(self._stages, stage)
            self._groups.add(stage)
        return stream

    # -- producers ----------------------------------------------------------
    @_unavailable
    async def put(self, message: Message) -> None:
        m = message
        await self._group(m.stage)
        now = self.clock.now()
        rk = self._rec(m.item, m.stage)
        seq = int(await self.r.incr(self._seq))
        async with self.r.pipeline(transaction=True) as p:
            p.zadd(self._waiting(m.stage), {str(seq): seq})
            p.hset(self._waiting_entries(m.stage), str(seq), json.dumps(self._fields(m, now)))
            p.hincrbyfloat(self._jobcost, m.job, m.cost_s)
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
            p.sadd(self._records, rk)
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
        }

    @_unavailable
    async def depth(self, stage: str) -> int:
        async with self.r.pipeline(transaction=False) as p:
            p.zcard(self._waiting(stage))
            p.xlen(self._stream(stage))
            waiting, running = await p.execute()
        return int(waiting) + int(running)

    @_unavailable
    async def pending(self) -> int:
        stages = [_s(s) for s in await self.r.smembers(self._stages)]
        return sum([await self.depth(s) for s in stages])

    # -- consumers ----------------------------------------------------------
    @_unavailable
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
            f = {_s(k): _s(v) for k, v in fields.items()}
            m = Message(
                f["item"],
                f["stage"],
                f["job"],
                json.loads(f["payload"]),
                f["key"] or None,
                float(f["cost"]),
            )
            attempt = int(f["prior"]) + delivered
            if attempt > self.max_deliveries:
                await self._fail_script(
                    keys=self._fail_keys(m),
                    args=[
                        GROUP,
                        entry_id,
                        "",
                        "delivered too often",
                        self.clock.now(),
                        self.max_deliveries,
                        attempt - 1,
                    ],
                )
                continue
            d = Delivery(m, entry_id, attempt, consumer)
            if serialize and m.key is not None:
                await self._lock_key(d, lease_s)
            started = await self._start_script(
                keys=[self._rec(m.item, m.stage), self._effects, self._stream(m.stage)],
                args=[f"{m.item}{SEP}{m.stage}", attempt, self.clock.now(), GROUP, entry_id],
            )
            if int(started) == 1:
                return d
            await self._unlock(d)  # its first holder completed it meanwhile: nothing to run

    def _fail_keys(self, m: Message) -> list[str]:
        return [
            self._stream(m.stage),
            self._rec(m.item, m.stage),
            self.dead_stream,
            self._seq,
            self._waiting(m.stage),
            self._waiting_entries(m.stage),
            self._jobcost,
        ]

    async def _take_fair(
        self, stage: str, stream: str, consumer: str, serialize: bool
    ) -> tuple[str, dict[Any, Any], int] | None:
        """The waiting entry the fairness policy picks, moved into the stream for us."""
        while True:
            seqs = [_s(x) for x in await self.r.zrange(self._waiting(stage), 0, -1)]
            if not seqs:
                return None
            raws = await self.r.hmget(self._waiting_entries(stage), seqs)
            entries = [(int(q), json.loads(_s(r))) for q, r in zip(seqs, raws, strict=True) if r]
            held: set[str] = set()
            if serialize:
                keys = sorted({f["key"] for _, f in entries if f["key"]})
                if keys:
                    locks = await self.r.mget([self._lock(stage, k) for k in keys])
                    held = {k for k, v in zip(keys, locks, strict=True) if v is not None}
            first: dict[str, tuple[int, dict[str, str]]] = {}
            for q, f in entries:  # seq order: each job's oldest claimable entry
                if f["job"] not in first and not (f["key"] and f["key"] in held):
                    first[f["job"]] = (q, f)
            if not first:
                return None
            jobs = sorted(first)
            costs = await self.r.hmget(self._jobcost, jobs)
            remaining = {
                j: max(0.0, float(_s(c))) if c else 0.0 for j, c in zip(jobs, costs, strict=True)
            }
            cands = [Candidate(j, q, remaining[j], float(f["at"])) for j, (q, f) in first.items()]
            chosen = self.policy.choose(cands, self.clock.now())
            assert chosen is not None
            reply = await self._promote_script(
                keys=[self._waiting(stage), self._waiting_entries(stage), stream],
                args=[chosen.seq, GROUP, consumer],
            )
            for _, rows in reply or []:
                for entry_id, flat in rows:
                    fields = {flat[k]: flat[k + 1] for k in range(0, len(flat), 2)}
                    return _s(entry_id), fields, 1
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
                eid = _s(entry_id)
                info = await self.r.xpending_range(stream, GROUP, eid, eid, 1)
                delivered = int(info[0]["times_delivered"]) if info else 1
                return eid, fields, delivered
            start = _s(cursor)
            if start == "0-0":
                break
        # entries a put of an older version wrote straight into the stream
        resp = await self.r.xreadgroup(GROUP, consumer, {stream: ">"}, count=1)
        for _, entries in resp or []:
            for entry_id, fields in entries:
                return _s(entry_id), fields, 1
        return None

    async def _lock_key(self, d: Delivery, lease_s: float) -> None:
        assert d.message.key is not None
        lock = self._lock(d.message.stage, d.message.key)
        seen = cancel_requests()
        while not await self.r.set(lock, d.receipt, nx=True, px=int(lease_s * 1000)):
            if _s(await self.r.get(lock) or b"") == d.receipt:
                return
            await self.extend(d, lease_s)
            checkpoint(seen)  # redis-py may lose a cancellation (see agentrt.checkpoint)
            await self.clock.sleep(min(0.05, lease_s / 4))

    async def _unlock(self, d: Delivery) -> None:
        if d.message.key is None:
            return
        lock = self._lock(d.message.stage, d.message.key)
        if _s(await self.r.get(lock) or b"") == d.receipt:
            await self.r.delete(lock)

    @_unavailable
    async def extend(self, delivery: Delivery, lease_s: float) -> None:
        stream = self._stream(delivery.message.stage)
        # XCLAIM with min-idle 0 and JUSTID resets the idle time without
        # counting a delivery: the lease is renewed
        await self.r.xclaim(stream, GROUP, delivery.consumer, 0, [delivery.receipt], justid=True)
        if delivery.message.key is not None:
            lock = self._lock(delivery.message.stage, delivery.message.key)
            if _s(await self.r.get(lock) or b"") == delivery.receipt:
                await self.r.pexpire(lock, int(lease_s * 1000))

    @_unavailable
    async def complete(
        self, delivery: Delivery, result: Mapping[str, Any], emits: Sequence[Emit] = ()
    ) -> bool:
        m = delivery.message
        now = self.clock.now()
        keys = [
            self._stream(m.stage),
            self._effects,
            self._records,
            self._rec(m.item, m.stage),
            self._seq,
            self._jobcost,
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
                self._waiting(em.stage),
                self._waiting_entries(em.stage),
                self._rec(em.item, em.stage),
            ]
            args += [
                em.item,
                em.stage,
                em.job,
                json.dumps(dict(em.payload)),
                em.key or "",
                repr(em.cost_s),
                len(e.requires),
            ]
            args += [f"{em.item}{SEP}{s}" for s in e.requires]
        applied = int(await self._complete_script(keys=keys, args=args)) == 1
        await self._unlock(delivery)
        self._signal.notify()
        return applied

    @_unavailable
    async def fail(self, delivery: Delivery, error: str) -> StageState:
        m = delivery.message
        state = await self._fail_script(
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
        return StageState(_s(state))

    # -- queries ------------------------------------------------------------
    @_unavailable
    async def results(self, item: str, stages: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not stages:
            return {}
        vals = await self.r.hmget(self._effects, [f"{item}{SEP}{s}" for s in stages])
        return {s: json.loads(v) for s, v in zip(stages, vals, strict=True) if v is not None}

    @_unavailable
    async def effects(self) -> list[tuple[str, str]]:
        """Every (item, stage) whose effect is recorded."""
        out = []
        for k in await self.r.hkeys(self._effects):
            item, _, stage = _s(k).partition(SEP)
            out.append((item, stage))
        return out

    @_unavailable
    async def dead(self) -> list[Message]:
        out = []
        for _, fields in await self.r.xrange(self.dead_stream):
            f = {_s(k): _s(v) for k, v in fields.items()}
            out.append(Message(f["item"], f["stage"], f["job"], json.loads(f["payload"])))
        return out

    @_unavailable
    async def records(self, job: str | None = None) -> list[StageRecord]:
        keys = sorted(_s(k) for k in await self.r.smembers(self._records))
        async with self.r.pipeline(transaction=False) as p:
            for k in keys:
                p.hgetall(k)
            rows = await p.execute()
        out = []
        for row in rows:
            h = {_s(k): _s(v) for k, v in row.items()}
            if not h or (job is not None and h["job"] != job):
                continue

            def num(name: str, h: dict[str, str] = h) -> float | None:
                return float(h[name]) if name in h else None

            out.append(
                StageRecord(
                    h["item"],
                    h["stage"],
                    h["job"],
                    StageState(h["state"]),
                    int(h.get("attempts", "0")),
                    num("queued_at"),
                    num("started_at"),
                    num("finished_at"),
                    h.get("error"),
                )
            )
        return out

    async def wait(self, timeout_s: float) -> None:
        await self._signal.wait(timeout_s)

    async def aclose(self) -> None:
        self._signal.notify()
        await self.r.aclose()
