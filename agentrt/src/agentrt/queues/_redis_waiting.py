"""What a claim on Redis chooses from: a stage's waiting entries and its groups' standing.

The Redis Streams backend (:mod:`agentrt.queues._redis_streams`) keeps a
stage's queued messages in a waiting set and its running ones in the
stage's stream. The fairness policy needs both at once: the waiting
entries, and per group how many entries run (those in the stream) and the
stage's latest claim ticket (a hash the promotion script writes). They are
read in one ``MULTI``, so the policy sees one state of the store; the
promotion that follows checks that its entry is still waiting, so a state
that changed in between costs a second choice, never a double delivery.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentrt.queues._fairness import Candidate
from agentrt.queues._redis_keys import RedisKeys, s_

__all__ = ["StageView", "WaitingEntry", "group_depth", "read_stage"]


@dataclass(frozen=True, slots=True)
class WaitingEntry:
    """One queued message as the claim sees it (its payload stays in Redis)."""

    seq: int
    job: str
    key: str  # "" when the message has none
    group: str
    at: float


@dataclass(frozen=True, slots=True)
class StageView:
    """A stage's waiting entries in seq order, and its groups' running counts and tickets."""

    waiting: tuple[WaitingEntry, ...]
    running: Mapping[str, int]
    served: Mapping[str, int]

    def firsts(self, held: set[str]) -> dict[str, WaitingEntry]:
        """Each job's oldest entry whose key is not ``held``: one candidate per job."""
        first: dict[str, WaitingEntry] = {}
        for e in self.waiting:
            if e.job not in first and not (e.key and e.key in held):
                first[e.job] = e
        return first

    def candidates(
        self, first: Mapping[str, WaitingEntry], remaining: Mapping[str, float]
    ) -> list[Candidate]:
        return [
            Candidate(
                j,
                e.seq,
                remaining.get(j, 0.0),
                e.at,
                e.group,
                self.running.get(e.group, 0),
                self.served.get(e.group, 0),
            )
            for j, e in first.items()
        ]


def _entry(seq: int, raw: Any) -> WaitingEntry:
    f = json.loads(s_(raw))
    # an entry written before groups has none: group ""
    return WaitingEntry(seq, f["job"], f["key"] or "", f.get("group", ""), float(f["at"]))


def _stream_groups(rows: Any) -> list[str]:
    """The group of each stream entry (XRANGE rows): one per running message."""
    return [s_((fields or {}).get(b"group", b"")) for _, fields in rows or ()]


async def read_stage(r: Any, keys: RedisKeys, stage: str) -> StageView:
    """One ``MULTI`` read of what a claim of ``stage`` chooses from."""
    async with r.pipeline(transaction=True) as p:
        p.zrange(keys.waiting(stage), 0, -1)
        p.hgetall(keys.waiting_entries(stage))
        p.xrange(keys.stream(stage))
        p.hgetall(keys.served(stage))
        seqs, raws, rows, served = await p.execute()
    by_seq = {s_(k): v for k, v in raws.items()}
    waiting = tuple(_entry(int(s_(q)), by_seq[s_(q)]) for q in seqs if s_(q) in by_seq)
    running: dict[str, int] = {}
    for g in _stream_groups(rows):
        running[g] = running.get(g, 0) + 1
    return StageView(waiting, running, {s_(g): int(t) for g, t in served.items()})


async def group_depth(r: Any, keys: RedisKeys, stage: str, group: str) -> int:
    """Live entries of ``group`` in ``stage``: it reads every live entry of the stage.

    One ``MULTI``, so an entry moving into the stream meanwhile is counted once.
    """
    async with r.pipeline(transaction=True) as p:
        p.hvals(keys.waiting_entries(stage))
        p.xrange(keys.stream(stage))
        entries, rows = await p.execute()
    queued = sum(1 for raw in entries if json.loads(s_(raw)).get("group", "") == group)
    return queued + sum(1 for g in _stream_groups(rows) if g == group)
