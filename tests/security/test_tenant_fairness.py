"""One tenant filling the queue neither locks out nor starves another (issue 21).

Seen: tenant A's bugs filled the queue, so tenant B got 429 until a slot
opened, and B's bug then ran behind every bug A had queued (first in, first
out across tenants). Here A submits until the service refuses it, while
its first bug holds the only worker; then B submits one bug. B's bug must
be accepted (202), and start with at most 2 of A's bugs starting after B
submitted and before B's: on the in-memory, SQLite and Redis queues, with
each bug as one job and with each bug on the staged pipeline's queues.
Everything runs in this process on a FakeClock: the order is decided by
the queue, not by timing.
"""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from svckit import whole_report

# agentrt/tests/queues is on sys.path ([tool.pytest.ini_options] pythonpath)
from agentrt import FakeClock
from agentrt.pipeline import Pipeline, Stage, StageContext
from agentrt.queues import MemoryQueue, QueueBackend, SqliteQueue
from agentrt.sim import StreamingASGITransport
from fixbugs.run.progress import EventSink
from fixbugs.run.report_schema import ReportModel
from fixbugs.service import ApiKeys, BugSpec, JobService, Workspace, create_app
from fixbugs.service.admission import tenant_share
from fixbugs.service.serve import ServeConfig, build_app

ACME, GLOBEX = "acme-key-1", "globex-key-2"
CAPACITY = 16
SHARE = tenant_share(CAPACITY, 2)  # what `fixbugs serve` gives two tenants: 8
_ns = itertools.count()


@dataclass
class Held:
    """Records which bug starts (by its ``test`` marker) and holds every run until released."""

    started: list[str] = field(default_factory=list)
    first: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    finished: int = 0
    expected: int = 0
    all_done: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self, marker: str) -> ReportModel:
        self.started.append(marker)
        self.first.set()
        await self.release.wait()
        self.finished += 1
        if self.finished == self.expected:
            self.all_done.set()
        return whole_report(marker)

    async def investigate(self, spec: BugSpec, sink: EventSink) -> ReportModel:
        return await self.run(str(spec.test))


@dataclass
class TwoStages:
    """A stand-in for the staged agent: its queue stages, the first one held."""

    held: Held

    async def _first(self, ctx: StageContext) -> Mapping[str, Any]:
        await self.held.run(str(ctx.input["test"]))
        return {}

    async def _last(self, ctx: StageContext) -> Mapping[str, Any]:
        return {"report": whole_report(ctx.input["test"]).model_dump(mode="json")}

    def pipeline(self) -> Pipeline:
        return Pipeline(
            [
                Stage("analysis", self._first, lease_s=60.0, capacity=CAPACITY),
                Stage("repair", self._last, after=("analysis",), lease_s=60.0, capacity=CAPACITY),
            ],
            name="staged-stand-in",
            capacity=CAPACITY,
        )


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[QueueBackend]:
    clock = FakeClock()
    q: QueueBackend
    if request.param == "memory":
        q = MemoryQueue(clock=clock, max_deliveries=2)
    elif request.param == "sqlite":
        q = SqliteQueue(tmp_path / "queue.db", clock=clock, max_deliveries=2)
    else:
        from agentrt.queues import RedisQueue

        url = request.getfixturevalue("redis_url")
        q = RedisQueue(url, clock=clock, max_deliveries=2, namespace=f"tenants{next(_ns)}")
    try:
        yield q
    finally:
        await q.aclose()


@pytest.mark.parametrize("staged", [False, True], ids=["one-job", "staged"])
async def test_a_second_tenant_is_admitted_and_served_within_two_bugs_of_the_first(
    backend: QueueBackend, staged: bool, tmp_path: Path
) -> None:
    held = Held()
    stages = TwoStages(held)
    assert isinstance(backend.clock, FakeClock)
    service = JobService(
        backend,
        held.investigate,
        Workspace(tmp_path / "ws"),
        clock=backend.clock,
        capacity=CAPACITY,
        workers=1,
        tenant_capacity=SHARE,
        staged=(lambda _publish: stages) if staged else None,  # type: ignore[arg-type,return-value]
    )
    app = create_app(service, keys=ApiKeys({ACME: "acme", GLOBEX: "globex"}), run_workers=False)
    transport = StreamingASGITransport(app, raise_app_exceptions=False)

    async def submit(key: str, marker: str) -> httpx.Response:
        body = {"example": "invoice", "test": marker}
        return await client.post("/v1/bugs", json=body, headers={"X-API-Key": key})

    async with (
        httpx.AsyncClient(transport=transport, base_url="http://test") as client,
        asyncio.TaskGroup() as tg,
    ):
        workers = tg.create_task(service.run())
        try:
            assert (await submit(ACME, "acme-1")).status_code == 202
            async with asyncio.timeout(30):  # a guard: a lost wake-up fails, never hangs
                await held.first.wait()  # acme's first bug holds the only worker
            accepted = 1
            while (r := await submit(ACME, f"acme-{accepted + 1}")).status_code == 202:
                accepted += 1
                assert accepted <= CAPACITY, "acme filled the whole queue"
            assert r.status_code == 429, r.text
            served_before = len(held.started)  # acme-1 only
            full = r
            r = await submit(GLOBEX, "globex-1")
            assert r.status_code == 202, r.text  # room while acme's share is full
            assert "share of the queue is full" in full.json()["detail"]
            assert int(full.headers["Retry-After"]) >= 1
            assert accepted == SHARE
            held.expected = accepted + 1
            held.release.set()
            async with asyncio.timeout(30):  # a guard: the order is the assertion
                await held.all_done.wait()
            await _drained(service)
        finally:
            workers.cancel()
    after = held.started[served_before:]
    assert sorted(after) == sorted([f"acme-{i}" for i in range(2, accepted + 1)] + ["globex-1"])
    ahead = after.index("globex-1")  # acme's bugs that started after globex submitted
    assert ahead <= 2, held.started


async def _drained(service: JobService) -> None:
    async with asyncio.timeout(30):  # a guard, as above
        while await service.depth() > 0:
            await service.backend.wait(1.0)


async def test_serve_gives_each_of_two_tenants_half_the_queue(tmp_path: Path) -> None:
    def share(**cfg: Any) -> int:
        cfg = {"workspace": tmp_path / "ws", "capacity": CAPACITY, **cfg}
        _, service, telemetry = build_app(ServeConfig(**cfg), models=None, run_workers=False)
        telemetry.shutdown()
        return service.tenant_capacity

    two = {ACME: "acme", GLOBEX: "globex"}
    assert share(tenant_keys=two) == CAPACITY // 2
    assert share(tenant_keys={ACME: "acme"}) == CAPACITY  # one tenant: nobody to share with
    assert share() == CAPACITY  # key-less local server
    assert share(tenant_keys=two, tenant_capacity=3) == 3


def test_a_tenant_capacity_out_of_range_is_a_one_line_error(tmp_path: Path) -> None:
    cli = [sys.executable, "-c", "from fixbugs.cli import main; main()", "serve"]
    p = subprocess.run(
        [*cli, "--workspace", str(tmp_path / "ws"), "--capacity", "4", "--tenant-capacity", "5"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode != 0
    assert "--tenant-capacity must be from 1 to --capacity (4)" in p.stderr
    assert "Traceback" not in p.stderr + p.stdout
    assert len(p.stderr.strip().splitlines()) == 1
