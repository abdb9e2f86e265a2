"""Faults at the process level under the compose topology, and what must still hold.

The topology of ``deploy/compose.yaml`` runs as processes (:mod:`topology`): the API,
one model-stage worker, two sandbox-stage workers, ``redis-server`` (AOF on), and the
model endpoint an operator configures with ``OPENAI_BASE_URL`` (``agentrt sim serve``,
a process that counts the requests it serves). While bugs run, :func:`run_once` does
what crashes and operators do to containers:

- ``kill -9`` of a worker while it is in each of the four queue stages (it watches the
  bugs' event log for a ``stage_started`` tagged with a live worker's name, host:pid),
  then starts another process of that service, as ``restart: unless-stopped`` would;
- restarts Redis on the same data directory (SIGTERM, as ``docker compose restart``);
- restarts the API (``kill -9``, then a new process on the same port).

Then it checks, and :class:`Figures` reports:

- every job finishes (its stream ends ``done`` and its report is validated) or is
  reported failed with its reason;
- **no stage's effect happens twice.** Our reading: a stage attempt whose effect was
  recorded is never run again (no model call or sandbox run of that (job, stage)
  after its effect is recorded), each (job, stage) effect is recorded exactly once,
  and the work redone is only that of attempts a kill cut short. Counted three ways:
  the queue's records (each (job, stage) has one effect; each delivery past the first
  follows a kill of a worker of that stage's service while that stage waited for its
  effect); the event log (every attempt's ``stage_started``, tagged with its worker:
  besides the one that recorded the effect, an attempt counts only if a kill cut it
  before the effect was recorded; sandbox runs are counted so); and the model
  endpoint's request counter (per model worker process, the requests it served less
  the model requests the effects it recorded carry: zero for a process that was not
  killed, and what a killed process's cut attempts asked otherwise). Work a kill cut
  short is "redone"; anything else is "duplicated", which must be 0;
- **no event is lost** from a job's SSE stream: a client that reconnects with
  ``Last-Event-ID`` after every dropped connection (the API restarted) receives every
  event of the job's log in Redis, in order, once;
- a job's files are deleted when it ends, also when it ended while the API was down.

``python tests/deploy/faults.py --runs 10`` runs the scenario ten times in a row and
prints each run's figures; ``tests/deploy/test_faults.py`` runs it once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for extra in (HERE, HERE.parents[1] / "agentrt" / "tests" / "queues"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import httpx  # noqa: E402
import redis.exceptions  # noqa: E402
from redisproc import free_port  # noqa: E402
from sse import Followed, follow  # noqa: E402
from topology import Proc, Topology  # noqa: E402

from agentrt.queues import QueueUnavailable, StageRecord, open_queue  # noqa: E402
from fixbugs.queued.events import FINISHED, open_events  # noqa: E402
from fixbugs.queued.state import decode  # noqa: E402

AGENTRT = str(Path(sys.executable).parent / "agentrt")
KEY = "deploy-faults-key"
QUEUE_STAGES = ("analysis", "reproduction", "root_cause", "repair")
# the agent's stages each queue stage runs: its attempt starts with the first
AGENT_STAGES = {
    "analysis": ("analysis", "file_relevance"),
    "reproduction": ("reproduction",),
    "root_cause": ("root_cause", "fix"),
    "repair": ("validation",),
}
FIRST = {q: a[0] for q, a in AGENT_STAGES.items()}
MODEL = ("analysis", "root_cause")
SERVICE = {"analysis": "model-worker", "root_cause": "model-worker"}
SERVICE |= {"reproduction": "sandbox-worker", "repair": "sandbox-worker"}
LEASE_S = 4.0  # a killed worker's stage comes back after this (the product's default: 60)
# the model endpoint: the simulator's default latency, ten times faster (a model stage
# takes a few seconds, so a kill lands inside one)
SIM_PROFILE, SIM_TIME_SCALE = "default", "10"
_NETWORK_ERRORS = (QueueUnavailable, redis.exceptions.RedisError, OSError)


@dataclass(frozen=True, slots=True)
class Kill:
    stage: str  # the queue stage the worker was seen starting
    job: str
    worker: str  # host:pid
    service: str
    at: float  # epoch seconds, just before the signal


@dataclass
class Figures:
    """One run's figures; ``problems`` lists what broke an invariant (empty: all held)."""

    jobs: int = 0
    kills: int = 0
    kills_in_stage: int = 0  # kills that came while the worker was in the stage
    redis_restarts: int = 0
    api_restarts: int = 0
    redone: int = 0  # deliveries past a (job, stage)'s first: attempts a kill cut short
    duplicated: int = 0  # must be 0
    events_lost: int = 0  # must be 0
    done: int = 0
    failed: dict[str, str] = field(default_factory=dict)  # job -> its reason
    model_requests: int = 0
    model_requests_redone: int = 0
    sandbox_runs: int = 0
    sandbox_runs_redone: int = 0
    wall_s: float = 0.0
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        failed = f" failed {len(self.failed)} ({'; '.join(self.failed.values())})"
        return (
            f"jobs {self.jobs} (done {self.done},{failed if self.failed else ' failed 0'}),"
            f" kills {self.kills} ({self.kills_in_stage} mid-stage),"
            f" redis restarts {self.redis_restarts},"
            f" API restarts {self.api_restarts}, redone attempts {self.redone},"
            f" duplicated effects {self.duplicated}, events lost {self.events_lost};"
            f" model requests {self.model_requests} ({self.model_requests_redone} redone),"
            f" sandbox runs {self.sandbox_runs} ({self.sandbox_runs_redone} redone);"
            f" {self.wall_s:.0f} s"
        )


@dataclass
class Attempt:
    """A stage attempt as the event log shows it: who started it, and when."""

    job: str
    stage: str  # queue stage
    worker: str
    at: float  # the event log's time of its stage_started (Redis server ms)


def _stream_time(pos: str) -> float:
    return int(pos.split("-")[0]) / 1000.0


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
        self.jobs: list[str] = []
        self.followers: list[asyncio.Task[Followed]] = []
        self.kills: list[Kill] = []
        self.pending = list(QUEUE_STAGES)  # stages whose kill is still to come
        self.redis_restarts = 0
        self.api_restarts = 0
        self.log: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
        # model worker processes: (process, sim requests when it started, ... when it ended)
        self.model_lives: list[tuple[Proc, int, int | None]] = []
        self.restarts: set[int] = set()  # pids whose replacement is already started
        self.background: list[asyncio.Task[None]] = []  # replacements and restarts
        self.t0 = time.monotonic()
        self.timeline: list[str] = []  # what happened when (printed with --verbose)

    def note(self, what: str) -> None:
        self.timeline.append(f"{time.monotonic() - self.t0:6.1f} s  {what}")

    # -- the model endpoint's counter -----------------------------------------
    async def sim_requests(self) -> int:
        async with httpx.AsyncClient(timeout=10) as c:
            return int((await c.get(self.sim_stats)).json()["requests"])

    # -- jobs --------------------------------------------------------------------
    async def submit(self, client: httpx.AsyncClient) -> None:
        for _ in range(100):  # the API may be restarting
            try:
                r = await client.post(
                    "/v1/bugs", json={"example": "invoice"}, headers={"X-API-Key": KEY}
                )
                if r.status_code == 202:
                    job = r.json()["id"]
                    self.note(f"submitted {job}")
                    self.jobs.append(job)
                    self.followers.append(asyncio.create_task(follow(client, job, KEY)))
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)
        raise RuntimeError("could not submit a job")

    # -- faults ------------------------------------------------------------------
    def kill_worker(self, proc: Proc, stage: str, job: str) -> None:
        """kill -9 ``proc`` now; another process of its service starts in the background."""
        self.kills.append(Kill(stage, job, proc.name, proc.service, time.time()))
        self.topo.kill(proc)  # SIGKILL and reap: a few milliseconds
        self.note(f"kill -9 {proc.service} {proc.name} in {stage} of {job}")
        self.restarts.add(proc.pid)
        self.later(self._replace(proc))

    async def _replace(self, proc: Proc) -> None:
        if proc.service == "model-worker":
            # the requests the killed process sent have reached the counter by now
            await asyncio.sleep(0.5)
            count = await self.sim_requests()
            old = next(i for i, (p, _, _) in enumerate(self.model_lives) if p is proc)
            self.model_lives[old] = (proc, self.model_lives[old][1], count)
            new = await asyncio.to_thread(self.topo.start_worker, proc.service)
            self.model_lives.append((new, count, None))
        else:
            await asyncio.to_thread(self.topo.start_worker, proc.service)

    def later(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` beside the watch, so the next kill still lands in its stage."""
        self.background.append(asyncio.create_task(work))

    async def restart_redis(self) -> None:
        self.redis_restarts += 1
        self.note("restart redis")
        await asyncio.to_thread(self.topo.restart_redis)
        self.note("redis up")

    async def restart_api(self) -> None:
        self.api_restarts += 1
        self.note("kill -9 api")
        await asyncio.to_thread(self.topo.kill_api)
        await asyncio.to_thread(self.topo.start_api)
        self.note("api up")

    def _seen_ended(self, job: str, stage: str) -> bool:
        last = AGENT_STAGES[stage][-1]
        return any(
            ev["kind"] == "stage_finished" and ev["stage"] == last for _, ev in self.log[job]
        )

    async def on_event(self, client: httpx.AsyncClient, job: str, ev: dict[str, Any]) -> None:
        """Kill the worker that just started a stage whose kill is pending; restart
        Redis after the first kill and the API after the second, while jobs run."""
        if ev["kind"] == "stage_started":
            stage = next((q for q, first in FIRST.items() if first == ev["stage"]), None)
            if stage in self.pending:
                proc = next((p for p in self.topo.workers() if p.name == ev.get("worker")), None)
                if proc is not None and proc.pid not in self.restarts:
                    self.pending.remove(stage)
                    self.kill_worker(proc, stage, job)
                    if len(self.kills) == 1:
                        self.later(self.restart_redis())
                    elif len(self.kills) == 2:
                        self.later(self.restart_api())
        # a stage every job has passed while its kill is pending: one more job
        for stage in self.pending:
            if (
                all(self._seen_ended(j, stage) for j in self.jobs)
                and len(self.jobs) < self.max_jobs
            ):
                await self.submit(client)
                break

    async def watch(self, client: httpx.AsyncClient) -> None:
        """Follow every job's event log in Redis (through Redis restarts) until all end."""
        channel = open_events(self.topo.redis_url, namespace="fixbugs")
        pos: dict[str, str] = {}
        ended: set[str] = set()
        try:
            while len(ended) < len(self.jobs) or len(self.jobs) < self.n_jobs:
                open_jobs = {j: pos.get(j, "0") for j in self.jobs if j not in ended}
                try:
                    got = await channel.read_many(open_jobs, timeout_s=0.5)
                except _NETWORK_ERRORS:
                    await asyncio.sleep(0.2)  # Redis restarting
                    continue
                for job, p, ev in got:
                    pos[job] = p
                    self.log[job].append((p, ev))
                    if ev["kind"] == FINISHED:
                        ended.add(job)
                        self.note(f"{job} ended")
                    else:
                        await self.on_event(client, job, ev)
        finally:
            await channel.aclose()

    # -- the run -------------------------------------------------------------------
    async def run(self) -> Figures:
        started = time.monotonic()
        await asyncio.to_thread(self.topo.start)
        self.note("topology up")
        model = self.topo.workers("model-worker")
        self.model_lives = [(p, 0, None) for p in model]  # no request before the first job
        async with httpx.AsyncClient(base_url=self.topo.api_url, timeout=60) as client:
            for _ in range(self.n_jobs):
                await self.submit(client)
            await asyncio.wait_for(self.watch(client), timeout=400)
            await asyncio.gather(*self.background)
            seen = await asyncio.wait_for(asyncio.gather(*self.followers), timeout=120)
            statuses = [await self._status(client, j) for j in self.jobs]
        end_count = await self.sim_requests()
        self.model_lives = [
            (p, a, b if b is not None else end_count) for p, a, b in self.model_lives
        ]
        figures = await self.check(dict(zip(self.jobs, seen, strict=True)), statuses)
        figures.wall_s = time.monotonic() - started
        return figures

    async def _status(self, client: httpx.AsyncClient, job: str) -> dict[str, Any]:
        for _ in range(100):
            with contextlib.suppress(httpx.TransportError):
                r = await client.get(f"/v1/bugs/{job}", headers={"X-API-Key": KEY})
                if r.status_code == 200:
                    out: dict[str, Any] = r.json()
                    rep = await client.get(f"/v1/bugs/{job}/report", headers={"X-API-Key": KEY})
                    out["report"] = rep.json() if rep.status_code == 200 else None
                    return out
            await asyncio.sleep(0.2)
        raise RuntimeError(f"no status for {job}")

    # -- the checks ----------------------------------------------------------------
    async def check(self, seen: dict[str, Followed], statuses: list[dict[str, Any]]) -> Figures:
        f = Figures(
            jobs=len(self.jobs),
            kills=len(self.kills),
            redis_restarts=self.redis_restarts,
            api_restarts=self.api_restarts,
        )
        if self.pending:
            f.problems.append(f"no kill in {self.pending} (every job passed them first)")
        q = open_queue(self.topo.redis_url, namespace="fixbugs")
        try:
            effects = await q.effects()  # type: ignore[attr-defined]
            records = await q.records()
            results = {j: await q.results(j, list(QUEUE_STAGES)) for j in self.jobs}
        finally:
            await q.aclose()
        self._check_jobs(f, statuses, seen)
        rec = {(r.item, r.stage): r for r in records}
        self._check_kills(f, rec)
        self._check_effects(f, effects, rec)
        self._check_attempts(f, rec)
        self._check_model_requests(f, rec, results)
        self._check_events(f, seen)
        left = [j for j in self.jobs if (self.topo.workspace / "jobs" / j).exists()]
        if left:
            f.problems.append(f"files of ended jobs left in the workspace: {left}")
        return f

    def _check_jobs(
        self, f: Figures, statuses: list[dict[str, Any]], seen: dict[str, Followed]
    ) -> None:
        for st in statuses:
            job = st["id"]
            if st["state"] == "done":
                rep = st["report"] or {}
                if rep.get("validated") is not True:
                    f.problems.append(f"{job}: done without a validated report")
                f.done += 1
            elif st["state"] in ("dead", "failed") and st.get("error"):
                f.failed[job] = str(st["error"])
            else:
                f.problems.append(f"{job}: neither finished nor failed with a reason: {st}")
            if seen[job].ended != st["state"]:
                f.problems.append(f"{job}: stream ended {seen[job].ended!r}, state {st['state']}")

    def _check_kills(self, f: Figures, rec: dict[tuple[str, str], StageRecord]) -> None:
        """Each kill came while its worker was in the stage: it had started the stage's
        attempt, had not finished it, and the stage's effect was not yet recorded."""
        for k in self.kills:
            last = AGENT_STAGES[k.stage][-1]
            started = finished = False
            for pos, ev in self.log[k.job]:
                if ev.get("worker") != k.worker or _stream_time(pos) > k.at:
                    continue
                started |= ev["kind"] == "stage_started" and ev["stage"] == FIRST[k.stage]
                finished |= ev["kind"] == "stage_finished" and ev["stage"] == last
            r = rec.get((k.job, k.stage))
            recorded = r.finished_at if r is not None and r.finished_at is not None else 0.0
            if started and not finished and recorded > k.at:
                f.kills_in_stage += 1
            else:
                f.problems.append(
                    f"the kill in {k.stage} of {k.job} came when its worker was not in it"
                    f" (started {started}, finished {finished}, recorded at {recorded},"
                    f" killed at {k.at})"
                )

    def _check_effects(
        self, f: Figures, effects: list[tuple[str, str]], rec: dict[tuple[str, str], StageRecord]
    ) -> None:
        mine = [e for e in effects if e[0] in self.jobs]
        twice = len(mine) - len(set(mine))
        if twice:
            f.duplicated += twice
            f.problems.append(f"effects recorded twice: {twice}")
        for job in self.jobs:
            if job in (f.failed or {}):
                continue
            missing = [s for s in QUEUE_STAGES if (job, s) not in set(mine)]
            if missing:
                f.problems.append(f"{job}: no effect for {missing}")

    def _kills_cutting(self, stage: str, start: float, recorded: float) -> list[Kill]:
        """Kills of a worker of ``stage``'s service between ``start`` and ``recorded``."""
        return [k for k in self.kills if k.service == SERVICE[stage] and start <= k.at <= recorded]

    def _check_attempts(self, f: Figures, rec: dict[tuple[str, str], StageRecord]) -> None:
        for job in self.jobs:
            attempts: dict[str, list[Attempt]] = defaultdict(list)
            for pos, ev in self.log[job]:
                if ev["kind"] != "stage_started":
                    continue
                stage = next((q for q, first in FIRST.items() if first == ev["stage"]), None)
                if stage is not None:
                    attempts[stage].append(Attempt(job, stage, ev["worker"], _stream_time(pos)))
            for stage in QUEUE_STAGES:
                r = rec.get((job, stage))
                if r is None:
                    continue
                recorded = r.finished_at if r.finished_at is not None else float("inf")
                runs = attempts[stage]
                killed = {k.worker: k.at for k in self.kills}
                cut = [
                    a for a in runs if a.worker in killed and a.at <= killed[a.worker] <= recorded
                ]
                whole = [a for a in runs if a not in cut]
                after = [a for a in runs if a.at > recorded]
                if stage not in MODEL:
                    f.sandbox_runs += len(runs)
                    f.sandbox_runs_redone += len(cut)
                if len(whole) > 1 or after:
                    f.duplicated += max(len(whole) - 1, len(after))
                    f.problems.append(
                        f"{job} {stage}: attempts no kill cut"
                        f" {[(a.worker, a.at) for a in whole]}, started after its effect"
                        f" ({recorded}): {len(after)}"
                    )
                # every delivery past the first follows a kill of a worker serving the stage
                extra = r.attempts - 1
                since = r.queued_at if r.queued_at is not None else 0.0
                explained = len(self._kills_cutting(stage, since, recorded))
                f.redone += extra
                if extra > explained:
                    f.duplicated += extra - explained
                    f.problems.append(
                        f"{job} {stage}: {r.attempts} deliveries,"
                        f" {explained} kill(s) to explain them"
                    )

    def _check_model_requests(
        self,
        f: Figures,
        rec: dict[tuple[str, str], StageRecord],
        results: dict[str, dict[str, Any]],
    ) -> None:
        """Per model worker process: requests it sent = those its recorded effects carry,
        plus (for a killed process only) those of the attempts the kill cut."""
        carried: dict[tuple[str, str], int] = {}
        for job, res in results.items():
            before = 0
            for stage in QUEUE_STAGES:
                if stage not in res:
                    break
                run = decode(res[stage]) if stage != "repair" else None
                if run is None:
                    break
                total = sum(r.attempts for r in run.records if r.kind == "model")
                carried[(job, stage)] = total - before
                before = total
        killed = {k.worker for k in self.kills}
        for proc, start, end in self.model_lives:
            assert end is not None
            sent = end - start
            f.model_requests += sent
            mine = sum(
                n
                for (job, stage), n in carried.items()
                if stage in MODEL
                and (r := rec.get((job, stage))) is not None
                and r.finished_at is not None
                and proc.started_at <= r.finished_at
                and (proc.name not in killed or r.finished_at <= self._killed_at(proc.name))
            )
            residual = sent - mine
            if proc.name in killed and residual >= 0:
                f.model_requests_redone += residual
            elif residual != 0:
                f.duplicated += max(residual, 0)
                f.problems.append(
                    f"model worker {proc.name}: {sent} requests served, {mine} in its effects"
                )

    def _killed_at(self, worker: str) -> float:
        return next(k.at for k in self.kills if k.worker == worker)

    def _check_events(self, f: Figures, seen: dict[str, Followed]) -> None:
        """The SSE stream of each job holds its event log, in order, each event once."""

        def key(ev: dict[str, Any]) -> str:
            shown = {k: v for k, v in ev.items() if not (ev["kind"] == "failed" and k == "message")}
            return json.dumps(shown, sort_keys=True)

        for job in self.jobs:
            logged = [key(ev) for _, ev in self.log[job] if ev["kind"] != FINISHED]
            got = seen[job].events
            ids = [e.id for e in got]
            if len(set(ids)) != len(ids):
                f.problems.append(f"{job}: an event id came twice over SSE")
            streamed = [key(e.data) for e in got]
            missing = len(logged) - len(set(logged) & set(streamed))
            if streamed != logged[: len(streamed)] or missing:
                lost = max(missing, len(logged) - len(streamed))
                f.events_lost += lost
                f.problems.append(
                    f"{job}: SSE gave {len(streamed)} events over {seen[job].connections}"
                    f" connection(s); the log holds {len(logged)} ({lost} lost)"
                )


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
            print(scenario.topo.logs_tail(), file=sys.stderr)
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
        os.environ.pop(k, None)
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
