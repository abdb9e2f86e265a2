"""What the Redis Streams backend has recorded, read back: effects, stage records, dead letters.

The queries of :class:`~agentrt.queues._redis_streams.RedisQueue`, kept
apart from its producers and consumers: they only read, and turn Redis's
hashes and stream entries back into the queue's types.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agentrt._json import JsonObject
from agentrt.queues._redis_keys import SEP, RedisKeys, s_
from agentrt.queues._types import Message, StageRecord, StageState

__all__ = ["read_dead", "read_effects", "read_records", "read_results"]


async def read_results(
    r: Any, keys: RedisKeys, item: str, stages: Sequence[str]
) -> dict[str, JsonObject]:
    """The recorded effects of ``item`` at ``stages`` (JSON objects), by stage."""
    if not stages:
        return {}
    vals = await r.hmget(keys.effects, [f"{item}{SEP}{s}" for s in stages])
    return {s: json.loads(v) for s, v in zip(stages, vals, strict=True) if v is not None}


async def read_effects(r: Any, keys: RedisKeys) -> list[tuple[str, str]]:
    """Every (item, stage) whose effect is recorded."""
    out = []
    for k in await r.hkeys(keys.effects):
        item, _, stage = s_(k).partition(SEP)
        out.append((item, stage))
    return out


async def read_dead(r: Any, keys: RedisKeys) -> list[Message]:
    """The messages in the dead-letter stream, oldest first."""
    out = []
    for _, fields in await r.xrange(keys.dead):
        f = {s_(k): s_(v) for k, v in fields.items()}
        payload = json.loads(f["payload"])
        out.append(Message(f["item"], f["stage"], f["job"], payload, group=f.get("group", "")))
    return out


async def read_records(r: Any, keys: RedisKeys, job: str | None) -> list[StageRecord]:
    """Every (item, stage)'s record, or only ``job``'s."""
    names = sorted(s_(k) for k in await r.smembers(keys.records))
    async with r.pipeline(transaction=False) as p:
        for k in names:
            p.hgetall(k)
        rows = await p.execute()
    out = []
    for row in rows:
        h = {s_(k): s_(v) for k, v in row.items()}
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
