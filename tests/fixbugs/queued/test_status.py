"""`fixbugs status --queue URL`: each queue stage's figures, on SQLite and on Redis.

The queue is filled and leased through the backend, as the service and its
workers do; the command reads it from the store alone. Exact ages come
from :func:`read_status` on an injected clock; the command itself ages by
epoch seconds, so through it only their presence is checked.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from redisproc import free_port
from typer.testing import CliRunner

from agentrt._clock import FakeClock
from agentrt.queues import Message, QueueBackend, SqliteQueue, StageStats
from agentrt.queues._redis_streams import RedisQueue
from fixbugs.cli import app
from fixbugs.queued import QUEUE_STAGES
from fixbugs.queued.status import read_status

runner = CliRunner()


# the command reads by epoch seconds: a lease taken on the writer's fake clock
# must still hold then (on SQLite a lease is a time in the file)
LEASE_S = 1e10


async def fill(q: QueueBackend) -> None:
    """Two bugs in analysis (one leased), one in repair, one dead-lettered in reproduction."""
    try:
        await q.put(Message("b1", "analysis", "b1"))
        assert isinstance(q.clock, FakeClock)
        q.clock.advance(40)
        await q.put(Message("b2", "analysis", "b2"))
        await q.put(Message("b3", "repair", "b3"))
        await q.put(Message("b4", "reproduction", "b4"))
        q.clock.advance(5)
        assert (await q.claim("analysis", "w", lease_s=LEASE_S)) is not None
        d = await q.claim("reproduction", "w", lease_s=LEASE_S)
        assert d is not None
        await q.fail(d, "boom")  # max_deliveries=1: dead-lettered at once
    finally:
        await q.aclose()


def sqlite_queue(path: Path) -> SqliteQueue:
    return SqliteQueue(path, clock=FakeClock(start=1000.0), max_deliveries=1)


EXPECTED = {
    "analysis": (1, 1, 0),
    "reproduction": (0, 0, 1),
    "root_cause": (0, 0, 0),
    "repair": (1, 0, 0),
}


def check_json(out: str) -> None:
    body = json.loads(out)
    got = {s["stage"]: (s["queued"], s["in_flight"], s["dead"]) for s in body["stages"]}
    assert list(got) == list(QUEUE_STAGES) and got == EXPECTED
    ages = {s["stage"]: s["oldest_age_s"] for s in body["stages"]}
    assert ages["root_cause"] is None and ages["reproduction"] is None
    assert ages["analysis"] is not None and ages["repair"] is not None
    total = body["total"]
    assert (total["queued"], total["in_flight"], total["dead"]) == (2, 1, 1)


def test_status_reads_a_sqlite_queue(tmp_path: Path) -> None:
    asyncio.run(fill(sqlite_queue(tmp_path / "q.db")))
    url = f"sqlite:///{tmp_path / 'q.db'}"
    r = runner.invoke(app, ["status", "--queue", url, "--json"])
    assert r.exit_code == 0, r.output
    check_json(r.stdout)

    r = runner.invoke(app, ["status", "--queue", url])
    assert r.exit_code == 0, r.output
    rows = {line.split("│")[1].strip(): line for line in r.stdout.splitlines() if "│" in line}
    assert set(rows) >= {*QUEUE_STAGES, "total"}
    cells = [c.strip() for c in rows["analysis"].split("│")[2:5]]
    assert cells == ["1", "1", "0"]
    assert [c.strip() for c in rows["total"].split("│")[2:5]] == ["2", "1", "1"]


def test_ages_are_by_the_clock_the_reader_is_given(tmp_path: Path) -> None:
    asyncio.run(fill(sqlite_queue(tmp_path / "q.db")))
    stats = asyncio.run(read_status(f"sqlite:///{tmp_path / 'q.db'}", clock=FakeClock(1050.0)))
    assert stats.stage("analysis") == StageStats("analysis", 1, 1, 0, 50.0)
    assert stats.stage("repair").oldest_age_s == 10.0
    assert stats.total.oldest_age_s == 50.0


def test_status_reads_a_redis_queue(redis_url: str) -> None:
    asyncio.run(
        fill(RedisQueue(redis_url, clock=FakeClock(), max_deliveries=1, namespace="fixbugs"))
    )
    r = runner.invoke(app, ["status", "--queue", redis_url, "--json"])
    assert r.exit_code == 0, r.output
    check_json(r.stdout)
    stats = asyncio.run(read_status(redis_url, clock=FakeClock(100.0)))
    assert stats.stage("analysis").oldest_age_s == 100.0  # put at 0 on the writer's clock


def test_another_stage_the_store_holds_is_listed_after_the_pipeline_s(tmp_path: Path) -> None:
    async def whole_bug() -> None:
        q = sqlite_queue(tmp_path / "q.db")
        await q.put(Message("b", "investigate", "b"))
        await q.aclose()

    asyncio.run(whole_bug())
    stats = asyncio.run(read_status(f"sqlite:///{tmp_path / 'q.db'}"))
    assert [s.stage for s in stats.stages] == [*QUEUE_STAGES, "investigate"]
    assert stats.stage("investigate").queued == 1


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("memory://", "--queue takes redis://HOST:PORT or sqlite:///PATH"),
        ("ftp://host/q", "--queue takes redis://HOST:PORT or sqlite:///PATH"),
        ("127.0.0.1:6379", "--queue takes redis://HOST:PORT or sqlite:///PATH"),
        ("sqlite://", "no queue database at"),
        ("redis://127.0.0.1:notaport/0", "bad queue URL"),
    ],
)
def test_a_bad_url_is_one_line_and_exit_2(url: str, message: str) -> None:
    r = runner.invoke(app, ["status", "--queue", url])
    assert r.exit_code == 2
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert r.stdout == ""


def test_a_missing_or_foreign_sqlite_file_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "q.db"
    r = runner.invoke(app, ["status", "--queue", f"sqlite:///{missing}"])
    assert r.exit_code == 2 and "no queue database at" in r.stderr
    assert not missing.parent.exists()
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not a database\n" * 100)
    r = runner.invoke(app, ["status", "--queue", f"sqlite:///{foreign}"])
    assert r.exit_code == 2 and "cannot read the queue" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_an_unreachable_redis_is_one_line_without_traceback() -> None:
    """Through the real entry point: nothing listens on the port."""
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            "from fixbugs.cli import main; main()",
            "status",
            "--queue",
            f"redis://127.0.0.1:{free_port()}/0",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2, p.stderr
    assert "cannot read the queue" in p.stderr and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
