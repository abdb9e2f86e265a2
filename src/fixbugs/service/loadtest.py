"""Load test: N concurrent submissions over loopback against a real server.

``python -m fixbugs.service.loadtest --bugs 200`` starts ``fixbugs serve``'s
app in its whole-bug mode (SQLite queue, uvicorn on 127.0.0.1, an ephemeral
port) with a stand-in investigator that takes ``--work-s`` per bug — this
measures the service, not the agent — and fires every submission at once.
A refused client waits the ``Retry-After`` it was given and tries again. It
stops by itself when every bug is finished (or ``--timeout-s`` passes) and prints JSON:
submissions accepted and lost, 429s and whether each had ``Retry-After``,
the deepest queue seen against its bound, and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import socket
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx

from fixbugs.queued.spec import BugSpec
from fixbugs.run.driver import STAGES
from fixbugs.run.progress import EventSink, ProgressEvent
from fixbugs.run.report_schema import ReportModel, ReproductionItem, ValidationItem
from fixbugs.service.jobs import Investigator
from fixbugs.service.serve import ServeConfig, build_app

__all__ = ["LoadStats", "main", "run_load"]


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stand_in(work_s: float) -> Investigator:
    async def investigate(spec: BugSpec, sink: EventSink) -> ReportModel:
        for i, s in enumerate(STAGES):
            sink(ProgressEvent("stage_started", s, float(i), f"{s} started"))
            await asyncio.sleep(work_s / len(STAGES))
            sink(ProgressEvent("stage_finished", s, float(i), f"{s} finished"))
        return ReportModel(
            title=spec.title,
            ranked_files=[],
            root_cause=None,
            patch=None,
            validated=False,
            validation=ValidationItem(summary="stand-in", tried=0, oracle="repository_tests"),
            reproduction=ReproductionItem(
                command=None, origin="none", confirmed=False, summary="stand-in", status="none"
            ),
            first_hypothesis_s=None,
            total_s=work_s,
            stages={},
            degraded=False,
            environment=None,
        )

    return investigate


@dataclass(slots=True)
class LoadStats:
    """What one load test saw, filled in as it runs; printed as JSON."""

    bugs: int
    refused: int = 0  # answers 429
    refused_without_retry_after: int = 0
    errors: dict[str, int] = field(default_factory=dict)  # other status -> answers
    max_depth: int = 0
    capacity: int | None = None
    rss_mib_peak: float = 0.0
    submit_s: float = 0.0
    total_s: float = 0.0
    accepted: int = 0
    reports: int = 0
    lost: int = 0
    unfinished: int = 0

    @property
    def ok(self) -> bool:
        return (
            self.lost == 0
            and self.refused > 0
            and self.refused_without_retry_after == 0
            and self.capacity is not None
            and self.max_depth <= self.capacity
        )

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "ok": self.ok}


async def _client(c: httpx.AsyncClient, stats: LoadStats, deadline: float) -> str | None:
    loop = asyncio.get_running_loop()
    while loop.time() < deadline:
        r = await c.post("/v1/bugs", json={"example": "invoice"})
        if r.status_code == 202:
            return str(r.json()["id"])
        if r.status_code == 429:
            stats.refused += 1
            after = r.headers.get("Retry-After")
            if after is None:
                stats.refused_without_retry_after += 1
            await asyncio.sleep(float(after or 1))
            continue
        stats.errors[str(r.status_code)] = stats.errors.get(str(r.status_code), 0) + 1
        return None
    return None


async def _watch_depth(c: httpx.AsyncClient, stats: LoadStats, stop: asyncio.Event) -> None:
    while not stop.is_set():
        snap = (await c.get("/v1/pipeline")).json()
        stats.max_depth = max(stats.max_depth, snap["queue"]["depth"])
        stats.capacity = snap["queue"]["capacity"]
        stats.rss_mib_peak = round(_rss_mib(), 1)
        await asyncio.sleep(0.1)


async def run_load(base: str, bugs: int, timeout_s: float) -> LoadStats:
    stats = LoadStats(bugs)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    limits = httpx.Limits(max_connections=bugs, max_keepalive_connections=bugs)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=60) as c:
        stop = asyncio.Event()
        async with asyncio.TaskGroup() as tg:
            watcher = tg.create_task(_watch_depth(c, stats, stop))
            t0 = loop.time()
            ids = await asyncio.gather(*(_client(c, stats, deadline) for _ in range(bugs)))
            stats.submit_s = round(loop.time() - t0, 2)
            accepted = [i for i in ids if i]
            pending = set(accepted)
            while pending and loop.time() < deadline:
                for job in list(pending):
                    st = (await c.get(f"/v1/bugs/{job}")).json()
                    if st["state"] in ("done", "dead"):
                        pending.discard(job)
                if pending:
                    await asyncio.sleep(0.25)
            reports = 0
            for job in accepted:
                if (await c.get(f"/v1/bugs/{job}/report")).status_code == 200:
                    reports += 1
            stats.total_s = round(loop.time() - t0, 2)
            stop.set()
            await watcher
    stats.accepted = len(set(accepted))
    stats.reports = reports
    stats.lost = bugs - reports
    stats.unfinished = len(pending)
    return stats


def main(argv: list[str] | None = None) -> int:
    import uvicorn

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bugs", type=int, default=200)
    ap.add_argument("--capacity", type=int, default=32)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--work-s", type=float, default=0.2)
    ap.add_argument("--timeout-s", type=float, default=300.0)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        # the stand-in handles a whole bug: the service's whole-bug mode, one per slot
        cfg = ServeConfig(
            workspace=Path(tmp), capacity=a.capacity, workers=a.workers, whole_bug=True
        )
        app, _, _ = build_app(cfg, models=None, investigator=stand_in(a.work_s))
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(1024)
        port = sock.getsockname()[1]
        # keep-alive longer than any client's idle wait (Retry-After): otherwise the server
        # may close a pooled connection just as the client reuses it (a ReadError under load)
        config = uvicorn.Config(app, log_level="error", backlog=1024, timeout_keep_alive=300)
        server = uvicorn.Server(config)
        t = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        t.start()
        rss0 = _rss_mib()
        try:
            stats = asyncio.run(run_load(f"http://127.0.0.1:{port}", a.bugs, a.timeout_s))
            result = stats.to_dict()
        finally:
            server.should_exit = True
            t.join(timeout=30)
            sock.close()
    result["rss_mib_start"] = round(rss0, 1)
    out = json.dumps(result, indent=2)
    print(out)
    if a.json:
        a.json.write_text(out + "\n")
    return 0 if stats.ok else 1


if __name__ == "__main__":
    sys.exit(main())
