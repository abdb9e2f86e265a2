"""The Redis Streams backend's stage figures: one script, one state of the store.

Kept apart from :mod:`agentrt.queues._redis_streams` (producers and
consumers): it only reads what those write — the waiting sets, the stage
streams and the dead-letter counts — and turns the reply into
:class:`~agentrt.queues._types.QueueStats`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentrt.queues._redis_keys import RedisKeys, s_
from agentrt.queues._types import QueueStats, StageStats, age_s

__all__ = ["read_stats"]


async def read_stats(
    r: Any, keys: RedisKeys, script: Any, now: float, stages: Sequence[str] | None
) -> QueueStats:
    """``stages``' figures (None: every stage the store has held), aged at ``now``.

    Cost: one ``SMEMBERS`` when ``stages`` is None, then one script of
    O(stages + entries in flight) (:data:`~agentrt.queues._redis_scripts.STATS`):
    no pass over the waiting entries, however many wait. In flight is what
    the stage's stream holds: leased entries, including one whose worker
    died and that no other worker has taken over yet. Ages compare this
    process's clock with the enqueuing process's, so they are as right as
    the machines' clocks agree.
    """
    names = (
        sorted({s_(s) for s in await r.smembers(keys.stages)})
        if stages is None
        else list(dict.fromkeys(stages))
    )
    if not names:
        return QueueStats(())
    stage_keys = [
        k for s in names for k in (keys.waiting(s), keys.waiting_entries(s), keys.stream(s))
    ]
    rows = await script(keys=[keys.dead_counts, keys.dead, *stage_keys], args=names)
    found = [
        StageStats(
            name,
            int(queued),
            int(in_flight),
            int(dead),
            age_s(now, float(s_(at))) if s_(at) else None,
        )
        for name, (queued, in_flight, dead, at) in zip(names, rows, strict=True)
    ]
    return QueueStats.of(found, stages)
