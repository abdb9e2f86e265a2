"""The embedded default: every stage queue in one SQLite file (WAL).

No server to start, durable across crashes, and shared by every process on
the machine that opens the same file. Each operation is one ``BEGIN
IMMEDIATE`` transaction, so claim, complete and fail are atomic against
other processes; effects are keyed (item, stage) with ``INSERT OR IGNORE``,
which is what makes a stage's effect apply exactly once. All database work
runs on one thread per backend, off the event loop.

A claim reads its candidates, each group's running count and the stage's
last claim ticket per group (table ``served``), and writes the new ticket,
in its one transaction. The tables, and what opening a file of an older
version adds to it, are in :mod:`agentrt.queues._sqlite_schema`.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from agentrt._clock import Clock
from agentrt._errors import UserError
from agentrt._json import JsonObject
from agentrt.queues._epoch import EpochClock
from agentrt.queues._failures import OUT_OF_DELIVERIES, FailureHooks, StageFailure
from agentrt.queues._fairness import Candidate, FairPolicy, GroupFair
from agentrt.queues._signal import ChangeSignal
from agentrt.queues._sqlite_schema import create_schema
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

__all__ = ["SqliteQueue"]

T = TypeVar("T")


class SqliteQueue:
    def __init__(
        self,
        path: str | Path,
        *,
        clock: Clock | None = None,
        max_deliveries: int = 5,
        policy: FairPolicy | None = None,
        synchronous: str = "NORMAL",
    ) -> None:
        """``synchronous=NORMAL`` survives process crashes (the WAL is written
        before commit returns); ``FULL`` also survives power loss, at an
        fsync per transaction."""
        self.path = Path(path)
        self.clock: Clock = clock or EpochClock()
        self.max_deliveries = max_deliveries
        self.policy: FairPolicy = policy or GroupFair()
        self._synchronous = synchronous
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentrt-sqlite")
        self._conn: sqlite3.Connection | None = None
        self._signal = ChangeSignal(self.clock)
        self.failures = FailureHooks()

    # -- plumbing -----------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            except (OSError, sqlite3.Error) as exc:
                raise UserError(f"cannot open queue database {str(self.path)!r}: {exc}") from None
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            create_schema(conn)
            self._conn = conn
        return self._conn

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        def txn() -> T:
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")
            try:
                out = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return out

        return await asyncio.get_running_loop().run_in_executor(self._pool, txn)

    def _put(self, c: sqlite3.Connection, m: Message, now: float) -> None:
        c.execute(
            "INSERT INTO messages (item, stage, job, payload, key, cost_s, enqueued_at, grp)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (m.item, m.stage, m.job, json.dumps(dict(m.payload)), m.key, m.cost_s, now, m.group),
        )
        c.execute(
            "INSERT INTO records (item, stage, job, state, attempts, queued_at)"
            " VALUES (?, ?, ?, 'queued', 0, ?) ON CONFLICT (item, stage) DO UPDATE"
            " SET state='queued', queued_at=excluded.queued_at",
            (m.item, m.stage, m.job, now),
        )

    # -- producers ----------------------------------------------------------
    async def put(self, message: Message) -> None:
        now = self.clock.now()
        await self._run(lambda c: self._put(c, message, now))
        self._signal.notify()

    async def depth(self, stage: str, group: str | None = None) -> int:
        def q(c: sqlite3.Connection) -> int:
            if group is None:
                row = c.execute("SELECT COUNT(*) FROM messages WHERE stage=?", (stage,)).fetchone()
            else:
                row = c.execute(
                    "SELECT COUNT(*) FROM messages WHERE stage=? AND grp=?", (stage, group)
                ).fetchone()
            return int(row[0])

        return await self._run(q)

    async def pending(self) -> int:
        return await self._run(
            lambda c: int(c.execute("SELECT COUNT(*) FROM messages").fetchone()[0])
        )

    async def stats(self, stages: Sequence[str] | None = None) -> QueueStats:
        """One transaction: live messages and dead letters, each grouped by stage.

        Cost: a pass over the live messages (bounded by the queue's capacity)
        and one over the dead letters (index ``dead_stage``), in a local file.
        """
        now = self.clock.now()

        def q(c: sqlite3.Connection) -> list[StageStats]:
            live = c.execute(
                "SELECT stage, SUM(CASE WHEN lease_until > ? THEN 0 ELSE 1 END),"
                " SUM(CASE WHEN lease_until > ? THEN 1 ELSE 0 END), MIN(enqueued_at)"
                " FROM messages GROUP BY stage",
                (now, now),
            ).fetchall()
            dead = dict(c.execute("SELECT stage, COUNT(*) FROM dead GROUP BY stage").fetchall())
            out = [
                StageStats(st, int(n), int(r), int(dead.pop(st, 0)), age_s(now, at))
                for st, n, r, at in live
            ]
            return out + [StageStats(st, dead=int(n)) for st, n in dead.items()]

        return QueueStats.of(await self._run(q), stages)

    # -- consumers ----------------------------------------------------------
    async def claim(
        self, stage: str, consumer: str, *, lease_s: float, serialize: bool = False
    ) -> Delivery | None:
        now = self.clock.now()
        dead: list[StageFailure] = []  # dead-lettered on the way, told once committed
        got = await self._run(
            lambda c: self._claim(c, stage, consumer, now, lease_s, serialize, dead)
        )
        for failure in dead:
            await self.failures.report(failure)
        return got

    def _claim(
        self,
        c: sqlite3.Connection,
        stage: str,
        consumer: str,
        now: float,
        lease_s: float,
        serialize: bool,
        dead: list[StageFailure],
    ) -> Delivery | None:
        held = ""
        args: list[str | float] = [stage, now]
        if serialize:
            held = (
                " AND (key IS NULL OR key NOT IN (SELECT key FROM messages WHERE stage=?"
                " AND key IS NOT NULL AND lease_until > ?))"
            )
            args += [stage, now]
        while True:
            firsts = c.execute(
                "SELECT m.seq, m.job, m.enqueued_at, m.grp FROM messages m JOIN ("
                " SELECT MIN(seq) AS s FROM messages WHERE stage=?"
                " AND (lease_until IS NULL OR lease_until <= ?)" + held + " GROUP BY job"
                ") f ON m.seq = f.s",
                args,
            ).fetchall()
            if not firsts:
                return None
            jobs = {job for _, job, _, _ in firsts}
            marks = ",".join("?" * len(jobs))
            remaining = dict(
                c.execute(
                    f"SELECT job, SUM(cost_s) FROM messages WHERE job IN ({marks}) GROUP BY job",
                    tuple(jobs),
                ).fetchall()
            )
            running = dict(
                c.execute(
                    "SELECT grp, COUNT(*) FROM messages WHERE stage=? AND lease_until > ?"
                    " GROUP BY grp",
                    (stage, now),
                ).fetchall()
            )
            served = dict(
                c.execute("SELECT grp, ticket FROM served WHERE stage=?", (stage,)).fetchall()
            )
            cands = [
                Candidate(
                    j,
                    s,
                    float(remaining.get(j, 0.0)),
                    t,
                    g,
                    int(running.get(g, 0)),
                    int(served.get(g, 0)),
                )
                for s, j, t, g in firsts
            ]
            chosen = self.policy.choose(cands, now)
            assert chosen is not None
            row = c.execute(
                "UPDATE messages SET deliveries = deliveries + 1, consumer=?, lease_until=?"
                " WHERE seq=? RETURNING item, stage, job, payload, key, cost_s, deliveries, grp",
                (consumer, now + lease_s, chosen.seq),
            ).fetchone()
            item, stg, job, payload, key, cost, deliveries, grp = row
            msg = Message(item, stg, job, json.loads(payload), key, float(cost), grp)
            if deliveries > self.max_deliveries:
                error = OUT_OF_DELIVERIES
                self._dead_letter(c, chosen.seq, msg, deliveries - 1, now, error)
                dead.append(StageFailure(msg, deliveries - 1, error, StageState.DEAD))
                continue
            c.execute(
                "INSERT INTO served (stage, grp, ticket) VALUES (?, ?,"
                " (SELECT COALESCE(MAX(ticket), 0) + 1 FROM served WHERE stage=?))"
                " ON CONFLICT (stage, grp) DO UPDATE SET ticket=excluded.ticket",
                (stg, grp, stg),
            )
            c.execute(
                "UPDATE records SET state='running', attempts=?, started_at=?"
                " WHERE item=? AND stage=?",
                (deliveries, now, item, stg),
            )
            return Delivery(msg, str(chosen.seq), int(deliveries), consumer)

    def _dead_letter(
        self, c: sqlite3.Connection, seq: int, m: Message, attempts: int, now: float, error: str
    ) -> None:
        c.execute("DELETE FROM messages WHERE seq=?", (seq,))
        c.execute(
            "INSERT INTO dead (item, stage, job, payload, error, at) VALUES (?, ?, ?, ?, ?, ?)",
            (m.item, m.stage, m.job, json.dumps(dict(m.payload)), error, now),
        )
        c.execute(
            "UPDATE records SET state='dead', attempts=?, finished_at=?, error=?"
            " WHERE item=? AND stage=?",
            (attempts, now, error, m.item, m.stage),
        )

    async def extend(self, delivery: Delivery, lease_s: float) -> None:
        until = self.clock.now() + lease_s
        await self._run(
            lambda c: c.execute(
                "UPDATE messages SET lease_until=? WHERE seq=? AND consumer=? AND deliveries=?",
                (until, int(delivery.receipt), delivery.consumer, delivery.attempt),
            )
        )

    async def complete(
        self, delivery: Delivery, result: JsonObject, emits: Sequence[Emit] = ()
    ) -> bool:
        now = self.clock.now()
        m = delivery.message
        body = json.dumps(dict(result))

        def txn(c: sqlite3.Connection) -> bool:
            cur = c.execute(
                "INSERT OR IGNORE INTO effects (item, stage, result, applied_at) VALUES (?,?,?,?)",
                (m.item, m.stage, body, now),
            )
            applied = cur.rowcount == 1
            if applied:
                for e in emits:
                    if e.requires:
                        marks = ",".join("?" * len(e.requires))
                        (have,) = c.execute(
                            f"SELECT COUNT(*) FROM effects WHERE item=? AND stage IN ({marks})",
                            (m.item, *e.requires),
                        ).fetchone()
                        if have < len(set(e.requires)):
                            continue
                    self._put(c, e.message, now)
                c.execute(
                    "UPDATE records SET state='done', finished_at=?, error=NULL"
                    " WHERE item=? AND stage=?",
                    (now, m.item, m.stage),
                )
            c.execute("DELETE FROM messages WHERE item=? AND stage=?", (m.item, m.stage))
            return applied

        applied = await self._run(txn)
        self._signal.notify()
        return applied

    async def fail(self, delivery: Delivery, error: str) -> StageState:
        now = self.clock.now()
        m = delivery.message

        def txn(c: sqlite3.Connection) -> tuple[StageState, bool]:
            """The record's state, and whether this call recorded the failure."""
            row = c.execute(
                "SELECT deliveries FROM messages WHERE seq=? AND consumer=? AND deliveries=?",
                (int(delivery.receipt), delivery.consumer, delivery.attempt),
            ).fetchone()
            if row is None:  # the lease was taken over or the item finished
                (state,) = c.execute(
                    "SELECT state FROM records WHERE item=? AND stage=?", (m.item, m.stage)
                ).fetchone()
                return StageState(state), False
            if row[0] >= self.max_deliveries:
                self._dead_letter(c, int(delivery.receipt), m, row[0], now, error)
                return StageState.DEAD, True
            c.execute(
                "UPDATE messages SET lease_until=NULL, consumer=NULL WHERE seq=?",
                (int(delivery.receipt),),
            )
            c.execute(
                "UPDATE records SET state='failed', finished_at=?, error=?"
                " WHERE item=? AND stage=?",
                (now, error, m.item, m.stage),
            )
            return StageState.FAILED, True

        state, recorded = await self._run(txn)
        self._signal.notify()
        if recorded:
            await self.failures.report(StageFailure(m, delivery.attempt, error, state))
        return state

    # -- queries ------------------------------------------------------------
    async def results(self, item: str, stages: Sequence[str]) -> dict[str, JsonObject]:
        if not stages:
            return {}
        marks = ",".join("?" * len(stages))

        def q(c: sqlite3.Connection) -> dict[str, JsonObject]:
            rows = c.execute(
                f"SELECT stage, result FROM effects WHERE item=? AND stage IN ({marks})",
                (item, *stages),
            ).fetchall()
            return {s: json.loads(r) for s, r in rows}

        return await self._run(q)

    async def effects(self) -> list[tuple[str, str]]:
        """Every (item, stage) whose effect is recorded."""
        return await self._run(lambda c: c.execute("SELECT item, stage FROM effects").fetchall())

    async def records(self, job: str | None = None) -> list[StageRecord]:
        def q(c: sqlite3.Connection) -> list[StageRecord]:
            sql = (
                "SELECT item, stage, job, state, attempts, queued_at, started_at, finished_at,"
                " error FROM records"
            )
            rows = (
                c.execute(sql + " WHERE job=?", (job,)).fetchall()
                if job is not None
                else c.execute(sql).fetchall()
            )
            return [StageRecord(r[0], r[1], r[2], StageState(r[3]), *r[4:]) for r in rows]

        return await self._run(q)

    async def wait(self, timeout_s: float) -> None:
        await self._signal.wait(timeout_s)

    async def aclose(self) -> None:
        def close() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

        await asyncio.get_running_loop().run_in_executor(self._pool, close)
        self._pool.shutdown(wait=True)
        self._signal.notify()
