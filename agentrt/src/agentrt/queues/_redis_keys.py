"""Redis Streams backend: key names, and what "Redis is not there" means.

Every key shares the hash tag ``{namespace}`` (in ``ns``), so the Lua
scripts that touch several of them also run on a cluster.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

import redis.exceptions as rexc

from agentrt.queues._types import QueueUnavailable

__all__ = ["GROUP", "SEP", "RedisKeys", "s_", "unavailable"]

P = ParamSpec("P")
T = TypeVar("T")
GROUP = "agentrt"
SEP = "\x1f"


def unavailable(
    fn: Callable[P, Coroutine[object, object, T]],
) -> Callable[P, Coroutine[object, object, T]]:
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


def s_(v: object) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


@dataclass(frozen=True, slots=True)
class RedisKeys:
    """The names of one namespace's keys (``ns`` holds the hash tag)."""

    ns: str

    def stream(self, stage: str) -> str:
        return f"{self.ns}:q:{stage}"

    def waiting(self, stage: str) -> str:
        return f"{self.ns}:w:{stage}"

    def waiting_entries(self, stage: str) -> str:
        return f"{self.ns}:wf:{stage}"

    def served(self, stage: str) -> str:
        """Hash: group -> the stage's claim ticket of the group's latest claim."""
        return f"{self.ns}:served:{stage}"

    def rec(self, item: str, stage: str) -> str:
        return f"{self.ns}:r:{item}{SEP}{stage}"

    def lock(self, stage: str, key: str) -> str:
        return f"{self.ns}:lock:{stage}:{key}"

    @property
    def seq(self) -> str:
        return f"{self.ns}:seq"

    @property
    def jobcost(self) -> str:
        return f"{self.ns}:jobcost"

    @property
    def effects(self) -> str:
        return f"{self.ns}:effects"

    @property
    def records(self) -> str:
        return f"{self.ns}:records"

    @property
    def stages(self) -> str:
        return f"{self.ns}:stages"

    @property
    def dead(self) -> str:
        return f"{self.ns}:dead"

    @property
    def dead_counts(self) -> str:
        """Hash: stage -> its entries in the dead stream (kept by the FAIL script)."""
        return f"{self.ns}:deadn"
