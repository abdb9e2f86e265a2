"""What the fault run found, each at its own level: restarts of Redis and of the API.

- A Redis restart stopped the API (its event relay raised the connection error and the
  app's lifespan ended) and would stop a worker whose event pump wrote at that moment:
  the event log now says "unavailable" as the queue does, the pump writes the batch
  again, the relay reads again from where it was.
- A restarted API held no events of jobs submitted before it: their streams were empty
  after a ``Last-Event-ID`` reconnection, and the inputs of a job that ended while it was
  down were never deleted. It now follows every job the index has not seen end, and a
  stream asked for a job it does not hold replays that job's log.
- The queue URL (a managed Redis's password in it) can come from the environment, and
  ``fixbugs serve --no-api`` prints it without the password.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from redisproc import free_port
from typer.testing import CliRunner

from agentrt import SystemClock
from agentrt.queues import MemoryQueue, QueueUnavailable
from fixbugs.cli import app
from fixbugs.queued.event_log import FINISHED, EventPump, EventRelay, RedisEvents, SqliteEvents
from fixbugs.service import EventHub, JobService, Workspace
from fixbugs.service.job_index import JobMeta
from fixbugs.service.serve import _shown


class Flaky:
    """An event channel whose first ``down`` calls find the store unavailable."""

    def __init__(self, down: int, events: Sequence[tuple[str, str, dict[str, Any]]] = ()) -> None:
        self.down = down
        self.calls = 0
        self.appended: list[tuple[str, dict[str, Any]]] = []
        self.events = list(events)

    def _maybe_down(self) -> None:
        self.calls += 1
        if self.calls <= self.down:
            raise QueueUnavailable("redis unavailable: Connection refused")

    async def append(self, job: str, events: Sequence[Mapping[str, Any]]) -> None:
        self._maybe_down()
        self.appended += [(job, dict(e)) for e in events]

    async def read(
        self, job: str, after: str, timeout_s: float
    ) -> list[tuple[str, dict[str, Any]]]:
        return []

    async def read_many(
        self, after: Mapping[str, str], timeout_s: float
    ) -> list[tuple[str, str, dict[str, Any]]]:
        self._maybe_down()
        out = [e for e in self.events if e[0] in after and e[1] > after[e[0]]]
        if not out:
            await asyncio.sleep(0.01)
        return out

    async def aclose(self) -> None:
        pass


async def test_the_event_pump_writes_every_event_in_order_once_the_store_is_back() -> None:
    channel = Flaky(down=3)
    pump = EventPump(channel, tag={"worker": "h:1"})
    for i in range(5):
        pump.publish("a" if i % 2 else "b", {"kind": "note", "n": i})
    task = asyncio.create_task(pump.run())
    await asyncio.wait_for(pump.flush(), timeout=30)
    task.cancel()
    assert channel.calls > 3  # it met the outage and went on
    for job in ("a", "b"):
        got = [e["n"] for j, e in channel.appended if j == job]
        assert got == [i for i in range(5) if ("a" if i % 2 else "b") == job]


async def test_the_event_relay_reads_again_after_the_store_was_unavailable() -> None:
    events = [("j", f"{i}-0", {"kind": "note", "n": i}) for i in range(1, 4)]
    events.append(("j", "9-0", {"kind": FINISHED}))
    hub = EventHub(SystemClock())
    hub.open("j")
    relay = EventRelay(Flaky(down=2, events=events), hub, idle_s=0.01)
    task = asyncio.create_task(relay.run())
    for _ in range(3000):  # bounded: each turn yields to the relay
        if (log := hub.log("j")) is not None and log.finished:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    log = hub.log("j")
    assert log is not None and log.finished
    assert [(seq, ev["n"]) for seq, ev in log.events] == [(1, 1), (2, 2), (3, 3)]


async def test_redis_events_say_unavailable_like_the_queue_when_redis_is_not_there() -> None:
    channel = RedisEvents(f"redis://127.0.0.1:{free_port()}")  # nothing listens there
    try:
        with pytest.raises(QueueUnavailable):
            await channel.append("j", [{"kind": "note"}])
        with pytest.raises(QueueUnavailable):
            await channel.read_many({"j": "0"}, timeout_s=0.01)
    finally:
        await channel.aclose()


def _service(root: Path, channel: SqliteEvents) -> JobService:
    async def never(*_: Any) -> Any:
        raise AssertionError("no whole-bug run here")

    return JobService(
        MemoryQueue(), never, Workspace(root), clock=SystemClock(), workers=0, events=channel
    )


async def test_a_new_api_process_follows_the_jobs_it_did_not_see_begin(tmp_path: Path) -> None:
    channel = SqliteEvents(tmp_path / "events.db", poll_s=0.01)
    service = _service(tmp_path / "ws", channel)
    now = SystemClock().now()
    # running when the API restarted: its end comes while this process runs
    service.index.record(JobMeta("running", "t", "a bug", now))
    service.workspace.create("running")
    # ended before: not followed until a client asks for its stream
    service.index.record(JobMeta("ended", "t", "a bug", now - 60, ended_at=now - 30))
    await channel.append("ended", [{"kind": "note", "n": 1}, {"kind": FINISHED}])
    task = asyncio.create_task(service.run())
    try:
        for _ in range(3000):  # bounded: each turn yields to the service
            if service.hub.log("running") is not None:
                break
            await asyncio.sleep(0.01)
        assert service.hub.log("ended") is None
        await channel.append("running", [{"kind": "note", "n": 1}, {"kind": FINISHED}])
        for _ in range(3000):
            log = service.hub.log("running")
            if log is not None and log.finished:
                break
            await asyncio.sleep(0.01)
        assert not service.workspace.job_dir("running").exists()  # its inputs went
        meta = service.index.get("running")
        assert meta is not None and meta.ended_at is not None
        # a stream asked for the ended job replays its log, with the same ids
        await service.events.follow("ended")
        await service.events.follow("nothing-logged")
        assert service.hub.log("nothing-logged") is None
        for _ in range(3000):
            log = service.hub.log("ended")
            if log is not None and log.finished:
                break
            await asyncio.sleep(0.01)
        log = service.hub.log("ended")
        assert log is not None and [(s, e["n"]) for s, e in log.events] == [(1, 1)]
    finally:
        task.cancel()
        await channel.aclose()


def test_the_queue_url_comes_from_the_environment_and_its_password_is_not_printed() -> None:
    res = CliRunner().invoke(
        app, ["worker", "--no-model"], env={"FIXBUGS_QUEUE": "nosuch://h/0", "COLUMNS": "200"}
    )
    assert res.exit_code == 2 and "unknown scheme 'nosuch'" in res.output, res.output
    assert _shown("rediss://app:s3cret@h:6380/0?ssl_cert_reqs=required") == (
        "rediss://app:***@h:6380/0?ssl_cert_reqs=required"
    )
    assert _shown("redis://:pw@h:6379") == "redis://:***@h:6379"
    assert _shown("redis://h:6379/0") == "redis://h:6379/0"
