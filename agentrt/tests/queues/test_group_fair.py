"""GroupFair as a pure policy, and stores written before messages had a group.

The policy is a function of the candidates and the time, so its order is
checked here without a store. A SQLite file or Redis namespace filled by a
version without groups must still open and serve its messages, in group "".
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path

from agentrt._clock import FakeClock
from agentrt.queues import Candidate, Fifo, GroupFair, Message, ShortestJobFirst, SqliteQueue
from agentrt.queues._redis_streams import RedisQueue

_ns = itertools.count()


def cand(job: str, seq: int, group: str, running: int = 0, served: int = 0) -> Candidate:
    return Candidate(job, seq, 1.0, 0.0, group, running, served)


def test_one_group_orders_exactly_as_the_policy_within() -> None:
    cands = [Candidate("big", 1, 50.0, 0.0), Candidate("small", 2, 1.0, 0.0)]
    assert GroupFair().choose(cands, 0.0) == ShortestJobFirst().choose(cands, 0.0)
    assert GroupFair(Fifo()).choose(cands, 0.0) == cands[0]
    assert GroupFair().choose([], 0.0) is None


def test_the_group_running_fewest_then_served_least_recently_goes_first() -> None:
    a, b = cand("a1", 1, "A", running=2, served=5), cand("b1", 2, "B", running=1, served=9)
    assert GroupFair().choose([a, b], 0.0) == b  # fewer running, though served later
    a, b = cand("a1", 1, "A", served=5), cand("b1", 2, "B")
    assert GroupFair().choose([a, b], 0.0) == b  # never served
    a, b = cand("a1", 3, "A", served=5), cand("b1", 2, "B", served=6)
    assert GroupFair().choose([a, b], 0.0) == a  # served longer ago


def test_tied_groups_are_chosen_between_by_the_policy_within() -> None:
    big = Candidate("big", 1, 50.0, 0.0, "A")
    small = Candidate("small", 2, 1.0, 0.0, "B")
    assert GroupFair().choose([big, small], 0.0) == small
    assert GroupFair(Fifo()).choose([big, small], 0.0) == big


# the messages table as versions before groups created it
_OLD_MESSAGES = """
CREATE TABLE messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    item TEXT NOT NULL, stage TEXT NOT NULL, job TEXT NOT NULL,
    payload TEXT NOT NULL, key TEXT, cost_s REAL NOT NULL,
    enqueued_at REAL NOT NULL, deliveries INTEGER NOT NULL DEFAULT 0,
    consumer TEXT, lease_until REAL
);
CREATE INDEX messages_stage ON messages (stage, job, seq);
CREATE TABLE records (
    item TEXT NOT NULL, stage TEXT NOT NULL, job TEXT NOT NULL, state TEXT NOT NULL,
    attempts INTEGER NOT NULL, queued_at REAL, started_at REAL, finished_at REAL, error TEXT,
    PRIMARY KEY (item, stage)
) WITHOUT ROWID;
INSERT INTO messages (item, stage, job, payload, key, cost_s, enqueued_at)
    VALUES ('old', 'a', 'j', '{"n": 1}', NULL, 0.0, 0.0);
INSERT INTO records (item, stage, job, state, attempts, queued_at)
    VALUES ('old', 'a', 'j', 'queued', 0, 0.0);
"""


async def test_a_sqlite_file_from_before_groups_opens_and_serves_its_messages(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(_OLD_MESSAGES)
    first, second = SqliteQueue(path, clock=FakeClock()), SqliteQueue(path, clock=FakeClock())
    try:
        assert await second.depth("a", "") == 1  # adds the column; ``first`` finds it
        await first.put(Message("new", "a", "k", {"n": 2}, group="B"))
        assert [await first.depth("a", g) for g in ("", "B")] == [1, 1]
        got = []
        while (d := await first.claim("a", "w", lease_s=30)) is not None:
            got.append((d.message.item, d.message.group, dict(d.message.payload)))
            assert await first.complete(d, {})
        assert sorted(got) == [("new", "B", {"n": 2}), ("old", "", {"n": 1})]
    finally:
        await first.aclose()
        await second.aclose()


async def test_redis_entries_from_before_groups_are_served_in_group_empty(
    redis_url: str,
) -> None:
    q = RedisQueue(redis_url, namespace=f"oldgrp{next(_ns)}")
    try:
        await q.put(Message("old", "a", "j", {"n": 1}, group="ignored"))
        # rewrite the waiting entry as a version before groups wrote it
        ((seq, raw),) = (await q.r.hgetall(q.keys.waiting_entries("a"))).items()
        fields = json.loads(raw)
        del fields["group"]
        await q.r.hset(q.keys.waiting_entries("a"), seq, json.dumps(fields))
        # and one that a still older put wrote straight into the stream
        stream = q.keys.stream("a")
        await q.r.xadd(stream, {**fields, "item": "older", "job": "k"})
        await q.put(Message("new", "a", "m", {"n": 2}, group="B"))
        assert [await q.depth("a", g) for g in ("", "B", "ignored")] == [2, 1, 0]
        got = []
        while (d := await q.claim("a", "w", lease_s=30)) is not None:
            got.append((d.message.item, d.message.group))
            assert await q.complete(d, {})
        assert sorted(got) == [("new", "B"), ("old", ""), ("older", "")]
        assert await q.pending() == 0
    finally:
        await q.aclose()
