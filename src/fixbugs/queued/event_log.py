"""Progress events through the queue's store, so a reader anywhere sees them live.

Workers on any machine append each bug's events to a per-bug log in the
store the queue already uses — a capped Redis stream per bug, or a table of
a SQLite file for the embedded mode — and the API (or any reader) follows
that log. Appends come from a synchronous sink (``Journal.emit``), so an
:class:`EventPump` buffers them and a background task writes them in order.

A store that is briefly unreachable (Redis restarting) is ridden out as the
queue rides it out: the Redis log raises
:class:`~agentrt.queues.QueueUnavailable`, the pump keeps its batch and
appends it again, and the relay reads again from where it stopped, so
neither a worker nor the API process stops, and no event is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from agentrt import UserError, cancel_requests, checkpoint
from agentrt.queues import QueueUnavailable

__all__ = [
    "FINISHED",
    "EventChannel",
    "EventPump",
    "EventRelay",
    "RedisEvents",
    "SqliteEvents",
    "failed_event",
    "finished_marker",
    "open_events",
]

_log = logging.getLogger(__name__)

Event = Mapping[str, Any]
# written after a job's last event by the worker that ended it; never shown
FINISHED = "_finished"


def failed_event(stage: str, error: str, *, final: bool) -> dict[str, Any]:
    """A stage run's failure (``error``: the queue's ``Type: message``, or its reason
    when no stage ran) as a job's event; ``final``: the queue dead-lettered it, so the
    job has ended (its status says ``dead``, with this reason)."""
    return {
        "kind": "failed",
        "stage": stage,
        "at_s": 0.0,
        "message": error,
        "data": {"final": final},
    }


def finished_marker() -> dict[str, Any]:
    """The :data:`FINISHED` marker: written after a job's last event, it ends the stream."""
    return {"kind": FINISHED, "stage": "run", "at_s": 0.0, "data": {}}


Read = list[tuple[str, dict[str, Any]]]
ReadMany = list[tuple[str, str, dict[str, Any]]]  # (job, position, event)
_RETRY_S = (0.05, 2.0)  # first and longest wait before trying an unavailable store again


@contextlib.contextmanager
def _redis_unavailable() -> Iterator[None]:
    """Redis not there right now (restarting, loading its AOF) as :class:`QueueUnavailable`,
    as the queue's own backend says it."""
    import redis.exceptions as rexc

    try:
        yield
    except (rexc.ConnectionError, rexc.TimeoutError, rexc.BusyLoadingError) as exc:
        raise QueueUnavailable(f"redis unavailable: {exc}") from exc
    except rexc.ResponseError as exc:
        if "LOADING" in str(exc) or "MISCONF" in str(exc):
            raise QueueUnavailable(f"redis unavailable: {exc}") from exc
        raise


class EventChannel(Protocol):
    async def append(self, job: str, events: Sequence[Event]) -> None: ...

    async def read(
        self, job: str, after: str, timeout_s: float
    ) -> list[tuple[str, dict[str, Any]]]:
        """Events of ``job`` after the position ``after`` ("0": from the start).

        Waits up to ``timeout_s`` for one when there is none yet.
        """
        ...

    async def read_many(self, after: Mapping[str, str], timeout_s: float) -> ReadMany:
        """Events of several jobs, each after its position; waits like :meth:`read`."""
        ...

    async def aclose(self) -> None: ...


class RedisEvents:
    """One capped stream per bug: ``{namespace}:ev:<job>``."""

    def __init__(
        self, url: str, *, namespace: str = "fixbugs", max_events: int = 2000, ttl_s: int = 604800
    ) -> None:
        import redis.asyncio as aioredis

        self.r: Any = aioredis.Redis.from_url(url, socket_connect_timeout=2.0)
        self.ns = "{" + namespace + "}"
        self.max_events = max_events
        self.ttl_s = ttl_s

    def _key(self, job: str) -> str:
        return f"{self.ns}:ev:{job}"

    async def append(self, job: str, events: Sequence[Event]) -> None:
        # one transaction: a batch that failed was not half written, so writing it
        # again (the pump does) adds no event twice
        with _redis_unavailable():
            async with self.r.pipeline(transaction=True) as p:
                for ev in events:
                    p.xadd(
                        self._key(job),
                        {"e": json.dumps(dict(ev))},
                        maxlen=self.max_events,
                        approximate=True,
                    )
                p.expire(self._key(job), self.ttl_s)
                await p.execute()

    async def read(
        self, job: str, after: str, timeout_s: float
    ) -> list[tuple[str, dict[str, Any]]]:
        with _redis_unavailable():
            resp = await self.r.xread({self._key(job): after}, block=max(1, int(timeout_s * 1000)))
        out = []
        for _, rows in resp or []:
            for eid, fields in rows:
                raw = fields.get(b"e") or fields.get("e")
                out.append((eid.decode() if isinstance(eid, bytes) else str(eid), json.loads(raw)))
        return out

    async def read_many(self, after: Mapping[str, str], timeout_s: float) -> ReadMany:
        streams = {self._key(j): p for j, p in after.items()}
        with _redis_unavailable():
            resp = await self.r.xread(streams, block=max(1, int(timeout_s * 1000)))
        prefix = len(self._key(""))
        out = []
        for key, rows in resp or []:
            job = (key.decode() if isinstance(key, bytes) else str(key))[prefix:]
            for eid, fields in rows:
                raw = fields.get(b"e") or fields.get("e")
                pos = eid.decode() if isinstance(eid, bytes) else str(eid)
                out.append((job, pos, json.loads(raw)))
        return out

    async def aclose(self) -> None:
        await self.r.aclose()


class SqliteEvents:
    """A table of a SQLite file (WAL): every worker process of the host appends."""

    def __init__(self, path: str | Path, *, poll_s: float = 0.1) -> None:
        self.path = Path(path)
        self.poll_s = poll_s
        self._conn: sqlite3.Connection | None = None
        self._lock = asyncio.Lock()

    def _c(self) -> sqlite3.Connection:
        if self._conn is None:
            c = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            c.execute("PRAGMA journal_mode=WAL")
            c.execute(
                "CREATE TABLE IF NOT EXISTS events"
                " (seq INTEGER PRIMARY KEY AUTOINCREMENT, job TEXT NOT NULL, data TEXT NOT NULL)"
            )
            c.execute("CREATE INDEX IF NOT EXISTS events_job ON events (job, seq)")
            c.commit()
            self._conn = c
        return self._conn

    async def append(self, job: str, events: Sequence[Event]) -> None:
        rows = [(job, json.dumps(dict(ev))) for ev in events]

        def write() -> None:
            c = self._c()
            with c:
                c.executemany("INSERT INTO events (job, data) VALUES (?, ?)", rows)

        async with self._lock:
            await asyncio.to_thread(write)

    async def read(
        self, job: str, after: str, timeout_s: float
    ) -> list[tuple[str, dict[str, Any]]]:
        def q() -> Read:
            rows = self._c().execute(
                "SELECT seq, data FROM events WHERE job=? AND seq>? ORDER BY seq",
                (job, int(after.split("-")[0] or 0)),
            )
            return [(str(s), json.loads(d)) for s, d in rows.fetchall()]

        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            async with self._lock:
                got = await asyncio.to_thread(q)
            if got or loop.time() >= deadline:
                return got
            await asyncio.sleep(self.poll_s)  # another process writes: nothing to wake us

    async def read_many(self, after: Mapping[str, str], timeout_s: float) -> ReadMany:
        out: ReadMany = []
        for job, pos in after.items():
            out += [(job, p, ev) for p, ev in await self.read(job, pos, 0.0)]
        if not out and timeout_s > 0:
            await asyncio.sleep(min(timeout_s, self.poll_s))
        return out

    async def aclose(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def open_events(url: str, *, namespace: str = "fixbugs") -> EventChannel:
    """The event log beside the queue at ``url`` (sqlite: a ``.events`` file next to it)."""
    scheme, sep, rest = url.partition("://")
    if scheme in {"redis", "rediss", "unix"}:
        return RedisEvents(url, namespace=namespace)
    if scheme == "sqlite" and sep:
        path = rest[1:] if rest.startswith("/") else rest
        return SqliteEvents(Path(path).with_suffix(".events.db"))
    raise UserError(f"no event log for queue URL {url!r}; use sqlite:///PATH or redis://HOST:PORT")


class EventPump:
    """A synchronous ``publish(job, event)`` whose events a task appends in order."""

    def __init__(self, channel: EventChannel, *, tag: Mapping[str, Any] | None = None) -> None:
        self.channel = channel
        self.tag = dict(tag or {})
        self._q: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()

    def publish(self, job: str, event: Mapping[str, Any]) -> None:
        self._q.put_nowait((job, {**event, **self.tag}))

    async def run(self) -> None:
        """Append until cancelled; what is buffered is written in batches per bug.

        A batch the store could not take (:class:`QueueUnavailable`) is appended
        again after a wait, before anything later: every event is written, in order.
        """
        seen = cancel_requests()
        while True:
            first = await self._q.get()
            batch = [first]
            while not self._q.empty():
                batch.append(self._q.get_nowait())
            by_job: dict[str, list[dict[str, Any]]] = {}
            for job, ev in batch:
                by_job.setdefault(job, []).append(ev)
            for job, evs in by_job.items():
                delay, cap = _RETRY_S
                while True:
                    try:
                        await self.channel.append(job, evs)
                        break
                    except QueueUnavailable as exc:
                        checkpoint(seen)
                        _log.warning("events of %s wait for the store: %s", job, exc)
                        await asyncio.sleep(delay)
                        delay = min(cap, delay * 2)
                checkpoint(seen)  # redis-py may lose a cancellation (see agentrt.checkpoint)
            for _ in batch:
                self._q.task_done()

    async def flush(self) -> None:
        await self._q.join()


class EventRelay:
    """Copies the event log of every job a local :class:`EventHub` follows into it.

    The API process's hub then streams (SSE) events that workers in other
    processes or machines wrote; the relay ends a job's stream at the
    :data:`FINISHED` marker its worker writes after the job's last event.
    ``on_finished`` runs first, in this process: the API owns the job's
    inputs and deletes them there, whichever worker (a ``fixbugs worker``
    elsewhere included) ended the job; the stream's end then means they are
    gone.
    """

    def __init__(
        self,
        channel: EventChannel,
        hub: Any,
        *,
        idle_s: float = 0.2,
        on_finished: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.channel = channel
        self.hub = hub  # fixbugs.service.event_hub.EventHub (no import: no cycle)
        self.idle_s = idle_s
        self.on_finished = on_finished
        self._pos: dict[str, str] = {}

    def _open_jobs(self) -> list[str]:
        return [job for job, log in list(self.hub._logs.items()) if not log.finished]

    async def run(self) -> None:
        """Relay until cancelled; a store that is unavailable is read again, from each
        job's position, once it answers."""
        seen = cancel_requests()
        delay, cap = _RETRY_S
        while True:
            jobs = self._open_jobs()
            if not jobs:
                await asyncio.sleep(self.idle_s)
                continue
            try:
                got = await self.channel.read_many(
                    {j: self._pos.get(j, "0") for j in jobs}, timeout_s=1.0
                )
            except QueueUnavailable as exc:
                checkpoint(seen)
                _log.warning("event relay waits for the store: %s", exc)
                await asyncio.sleep(delay)
                delay = min(cap, delay * 2)
                continue
            delay = _RETRY_S[0]
            checkpoint(seen)
            for job, pos, ev in got:
                self._pos[job] = pos
                if ev.get("kind") == FINISHED:  # the job's last event: end its stream
                    if self.on_finished is not None:
                        try:
                            await self.on_finished(job)
                        except OSError as exc:  # a disk error must not stop the relay
                            _log.warning("job %s ended; its inputs stay: %s", job, exc)
                    self.hub.finish(job)
                    self._pos.pop(job, None)
                else:
                    self.hub.publish(job, ev)
