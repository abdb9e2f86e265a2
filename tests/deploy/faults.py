"""Faults at the process level under the compose topology, while bugs run.

The topology of ``deploy/compose.yaml`` runs as processes (:mod:`topology`): the API,
one model-stage worker, two sandbox-stage workers, ``redis-server`` (AOF on), and the
model endpoint an operator configures with ``OPENAI_BASE_URL`` (``agentrt sim serve``,
a process that counts the requests it serves). While three bugs run, :func:`run_once`
does what crashes and operators do to containers:

- ``kill -9`` of a worker while it is in each of the four queue stages (it watches the
  bugs' event log for a ``stage_started`` tagged with a live worker's name, host:pid;
  in a model stage, that of its second agent stage, once the model was asked), then
  starts another process of that service, as ``restart: unless-stopped`` would;
- after the first kill, restarts Redis on the same data directory (SIGTERM, as
  ``docker compose restart`` does);
- after the second, kills the API and starts another on the same port.

Then :mod:`faultchecks` checks (its docstring gives our reading of "no stage's effect
happens twice") that every job finished or failed with its reason, nothing was done
twice, work redone was only that of attempts a kill cut short, no event was lost from
a job's SSE stream read by a client that reconnects with ``Last-Event-ID``, and each
job's files were deleted at its end (also when it ended while the API was down).

``python tests/deploy/faults.py --runs 10`` runs it ten times in a row and prints each
run's figures; ``tests/deploy/test_faults.py`` runs it once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for extra in (HERE, HERE.parents[1] / "agentrt" / "tests" / "queues"):
    if str(extra) not in sys.path:  # run as a script: the tests' own modules
        sys.path.insert(0, str(extra))

import httpx  # noqa: E402
import redis.exceptions  # noqa: E402
from faultchecks import (  # noqa: E402
    AGENT_STAGES,
    QUEUE_STAGES,
    Figures,
    Kill,
    ModelLife,
    Seen,
    carried_requests,
    check_attempts,
    check_effects,
    check_events,
    check_jobs,
    check_kills,
    check_model_requests,
)
from redisproc import free_port  # noqa: E402
from sse import Followed, follow  # noqa: E402
from topology import Proc, Topology  # noqa: E402

from agentrt.queues import QueueUnavailable, open_queue  # noqa: E402
from fixbugs.queued.event_log import FINISHED, open_events  # noqa: E402

AGENTRT = str(Path(sys.executable).parent / "agentrt")
KEY = "deploy-faults-key"
LEASE_S = 4.0  # a killed worker's stage comes back after this (the product's default: 60)
# the model endpoint: the simulator's default latency, ten times faster (a model stage
# takes a few seconds, so a kill lands inside one)
SIM_PROFILE, SIM_TIME_SCALE = "default", "10"
_STORE_DOWN = (QueueUnavailable, redis.exceptions.RedisError, OSError)
# a queue stage's kill comes when its worker starts this agent stage: the last of the
# queue stage's, so a model stage's attempt has asked the model already (analysis:
# its log map; root_cause: the judgment) and its requests are redone
KILL_AT = {q: a[-1] for q, a in AGENT_STAGES.items()}


@contextlib.contextmanager
def sim_server(logs: Path) -> Iterator[str]:
    """``agentrt sim serve`` as a process; yields its base URL (…/v1)."""
    port = free_port()
    argv = [AGENTRT, "sim", "serve", "--port", str(port), "--profile", SIM_PROFILE]
    argv += ["--time-scale", SIM_TIME_SCALE]
    with (logs / "sim.log").open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(timeout=2.0) as client:
            for _ in range(600):  # bounded: each try waits for the server
                try:
                    client.get(f"http://127.0.0.1:{port}/sim/stats")
                    break
                except httpx.TransportError:
                    if proc.poll() is not None:
                        raise RuntimeError((logs / "sim.log").read_text()) from None
                    time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(30)


class Scenario:
    """One run: the topology, the jobs, the faults as they are done, what was seen."""

    def __init__(self, root: Path, sim_url: str, *, jobs: int, max_jobs: int) -> None:
        self.topo = Topology(
            root,
            env={"FIXBUGS_API_KEYS": f"faults:{KEY}", "OPENAI_BASE_URL": sim_url},
            extra_args={
                "model-worker": ["--lease-s", str(LEASE_S)],
                # one sandbox stage per worker: two workers, two cores
                "sandbox-worker": ["--lease-s", str(LEASE_S), "--sandbox-slots", "1"],
            },
        )
        self.sim_stats = sim_url.removesuffix("/v1") + "/sim/stats"
        self.n_jobs = jobs
        self.max_jobs = max_jobs
        self.seen = Seen()
        self.followers: list[asyncio.Task[Followed]] = []
        self.pending = list(QUEUE_STAGES)  # stages whose kill is still to come
        self.redis_restarts = 0
        self.api_restarts = 0
        self.replaced: set[int] = set()  # pids killed here (another process replaces each)
        self.background: list[asyncio.Task[None]] = []  # replacements and restarts
        self.t0 = time.monotonic()
        self.timeline: list[str] = []  # what happened when (printed with --verbose)

    def note(self, what: str) -> None:
        self.timeline.append(f"{time.monotonic() - self.t0:6.1f} s  {what}")

    def later(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` beside the watch, so the next kill still lands in its stage."""
        self.background.append(asyncio.create_task(work))

    async def sim_requests(self) -> int:
        async with httpx.AsyncClient(timeout=10) as c:
            return int((await c.get(self.sim_stats)).json()["requests"])

    # -- jobs --------------------------------------------------------------------
    async def submit(self, client: httpx.AsyncClient) -> None:
        for _ in range(100):  # bounded; the API may be restarting
            try:
                r = await client.post(
                    "/v1/bugs", json={"example": "invoice"}, headers={"X-API-Key": KEY}
                )
                if r.status_code == 202:
                    job = r.json()["id"]
                    self.note(f"submitted {job}")
                    self.seen.jobs.append(job)
                    self.followers.append(asyncio.create_task(follow(client, job, KEY)))
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)
        raise RuntimeError("could not submit a job")

    # -- faults ------------------------------------------------------------------
    def kill_worker(self, proc: Proc, stage: str, job: str) -> None:
        """kill -9 ``proc`` now; another process of its service starts in the background."""
        self.seen.kills.append(Kill(stage, job, proc.name, proc.service, time.time()))
        self.topo.kill(proc)  # SIGKILL and reap: a few milliseconds
        self.note(f"kill -9 {proc.service} {proc.name} in {stage} of {job}")
        self.replaced.add(proc.pid)
        self.later(self._replace(proc))

    async def _replace(self, proc: Proc) -> None:
        if proc.service != "model-worker":
            await asyncio.to_thread(self.topo.start_worker, proc.service)
            return
        await asyncio.sleep(0.5)  # what the killed process sent has reached the counter
        count = await self.sim_requests()
        for life in self.seen.model_lives:
            if life.worker == proc.name:
                life.requests_after = count
        new = await asyncio.to_thread(self.topo.start_worker, proc.service)
        self.seen.model_lives.append(ModelLife(new.name, new.started_at, count))

    async def restart_redis(self) -> None:
        self.redis_restarts += 1
        self.note("restart redis")
        await asyncio.to_thread(self.topo.restart_redis)
        self.note("redis up")

    async def restart_api(self) -> None:
        self.api_restarts += 1
        self.note("kill -9 api")
        if self.topo.api is not None:
            self.replaced.add(self.topo.api.pid)
        await asyncio.to_thread(self.topo.kill_api)
        await asyncio.to_thread(self.topo.start_api)
        self.note("api up")

    def _passed(self, job: str, stage: str) -> bool:
        last = AGENT_STAGES[stage][-1]
        return any(
            ev["kind"] == "stage_finished" and ev["stage"] == last for _, ev in self.seen.log[job]
        )

    async def on_event(self, client: httpx.AsyncClient, job: str, ev: dict[str, Any]) -> None:
        """Kill the worker that just started a stage whose kill is pending; restart
        Redis after the first kill and the API after the second, while jobs run."""
        if ev["kind"] == "stage_started":
            stage = next((q for q, agent in KILL_AT.items() if agent == ev["stage"]), None)
            if stage in self.pending:
                proc = next((p for p in self.topo.workers() if p.name == ev.get("worker")), None)
                if proc is not None and proc.pid not in self.replaced:
                    self.pending.remove(stage)
                    self.kill_worker(proc, stage, job)
                    if len(self.seen.kills) == 1:
                        self.later(self.restart_redis())
                    elif len(self.seen.kills) == 2:
                        self.later(self.restart_api())
        # a stage every job has passed while its kill is pending: one more job
        jobs = self.seen.jobs
        for stage in self.pending:
            if all(self._passed(j, stage) for j in jobs) and len(jobs) < self.max_jobs:
                await self.submit(client)
                break

    async def watch(self, client: httpx.AsyncClient) -> None:
        """Follow every job's event log in Redis (through Redis restarts) until all end."""
        channel = open_events(self.topo.redis_url, namespace="fixbugs")
        pos: dict[str, str] = {}
        ended: set[str] = set()
        try:
            while len(ended) < len(self.seen.jobs):
                self._no_unexpected_exit()
                open_jobs = {j: pos.get(j, "0") for j in self.seen.jobs if j not in ended}
                try:
                    got = await channel.read_many(open_jobs, timeout_s=0.5)
                except _STORE_DOWN:
                    await asyncio.sleep(0.2)  # Redis restarting
                    continue
                for job, p, ev in got:
                    pos[job] = p
                    self.seen.log[job].append((p, ev))
                    if ev["kind"] == FINISHED:
                        ended.add(job)
                        self.note(f"{job} ended")
                    else:
                        await self.on_event(client, job, ev)
        finally:
            await channel.aclose()

    def _no_unexpected_exit(self) -> None:
        """A process that exited without being killed here ends the run, with its log."""
        for p in self.topo.procs:
            if p.service != "redis" and not p.alive() and p.pid not in self.replaced:
                raise RuntimeError(f"{p.service} {p.name} exited by itself:\n{p.tail()}")

    # -- the run -------------------------------------------------------------------
    async def run(self) -> Figures:
        await asyncio.to_thread(self.topo.start)
        self.note("topology up")
        for p in self.topo.workers("model-worker"):  # no request before the first job
            self.seen.model_lives.append(ModelLife(p.name, p.started_at, 0))
        async with httpx.AsyncClient(base_url=self.topo.api_url, timeout=60) as client:
            for _ in range(self.n_jobs):
                await self.submit(client)
            await asyncio.wait_for(self.watch(client), timeout=400)
            await asyncio.gather(*self.background)
            streams = await asyncio.wait_for(asyncio.gather(*self.followers), timeout=120)
            statuses = [await self._status(client, j) for j in self.seen.jobs]
        end = await self.sim_requests()
        for life in self.seen.model_lives:
            life.requests_after = end if life.requests_after is None else life.requests_after
        figures = await self.check(dict(zip(self.seen.jobs, streams, strict=True)), statuses)
        figures.wall_s = time.monotonic() - self.t0
        return figures

    async def _status(self, client: httpx.AsyncClient, job: str) -> dict[str, Any]:
        for _ in range(100):  # bounded
            with contextlib.suppress(httpx.TransportError):
                r = await client.get(f"/v1/bugs/{job}", headers={"X-API-Key": KEY})
                if r.status_code == 200:
                    out: dict[str, Any] = r.json()
                    rep = await client.get(f"/v1/bugs/{job}/report", headers={"X-API-Key": KEY})
                    out["report"] = rep.json() if rep.status_code == 200 else None
                    return out
            await asyncio.sleep(0.2)
        raise RuntimeError(f"no status for {job}")

    async def check(self, streams: dict[str, Followed], statuses: list[dict[str, Any]]) -> Figures:
        seen = self.seen
        f = Figures(
            jobs=len(seen.jobs),
            kills=len(seen.kills),
            redis_restarts=self.redis_restarts,
            api_restarts=self.api_restarts,
        )
        if self.pending:
            f.problems.append(f"no kill in {self.pending} (every job passed them first)")
        q = open_queue(self.topo.redis_url, namespace="fixbugs")
        try:
            effects = await q.effects()  # type: ignore[attr-defined]
            rec = {(r.item, r.stage): r for r in await q.records()}
            results = {j: await q.results(j, list(QUEUE_STAGES)) for j in seen.jobs}
        finally:
            await q.aclose()
        check_jobs(f, statuses, streams)
        check_kills(f, seen, rec)
        check_effects(f, seen, effects)
        check_attempts(f, seen, rec)
        check_model_requests(f, seen, rec, carried_requests(results))
        check_events(f, seen, streams)
        left = [j for j in seen.jobs if (self.topo.workspace / "jobs" / j).exists()]
        if left:
            f.problems.append(f"files of ended jobs left in the workspace: {left}")
        return f


async def run_once(
    root: Path, *, jobs: int = 3, max_jobs: int = 6, verbose: bool = False
) -> Figures:
    """One run of the scenario under ``root`` (every process is stopped at the end)."""
    logs = root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with sim_server(logs) as sim_url:
        scenario = Scenario(root, sim_url, jobs=jobs, max_jobs=max_jobs)
        try:
            figures = await scenario.run()
        except BaseException:
            print(scenario.topo.logs_tail(), "\n".join(scenario.timeline), file=sys.stderr)
            raise
        finally:
            await asyncio.to_thread(scenario.topo.close)
    if figures.problems:
        print(scenario.topo.logs_tail(), file=sys.stderr)
    if verbose or figures.problems:
        print("\n".join(scenario.timeline), file=sys.stderr)
    return figures


def main(argv: list[str] | None = None) -> int:
    """``--runs N``: the scenario N times in a row, one line of figures per run."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="keep each run's folder (logs)")
    ap.add_argument("--verbose", action="store_true", help="print each run's timeline")
    args = ap.parse_args(argv)
    os.environ["AGENTRT_LOCAL_PORTS"] = ""  # no probe of this machine's model ports
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "ANTHROPIC_API_KEY"):
        os.environ.pop(k, None)  # the workers' endpoint is the simulator alone
    bad = 0
    for n in range(1, args.runs + 1):
        root = Path(tempfile.mkdtemp(prefix="fixbugs-faults-"))
        try:
            figures = asyncio.run(run_once(root, jobs=args.jobs, verbose=args.verbose))
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
        print(f"run {n}: {figures.line()}", flush=True)
        for p in figures.problems:
            print(f"  problem: {p}", flush=True)
        bad += bool(figures.problems)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
