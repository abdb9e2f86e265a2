"""SIGKILL a staged worker at every stage boundary and mid-stage, on SQLite and Redis.

One bug (``bug0``) is the target: worker processes in turn each run the
staged pipeline until they reach their kill point for it — mid-stage (its
first progress event after the stage started), after the stage's work but
before its effect is recorded, and just after the effect is recorded — then
one more worker drains the queue. A second bug runs alongside. Both bugs
must finish with a validated report, each (bug, stage) effect recorded
exactly once, and every run of a (bug, stage) a delivery of the same
message (no downstream message sent twice).

On SQLite the twelve workers die at every point of every stage. Each worker
there reads the time one lease later than the one before it (an injected
clock): the dead worker's lease has run out when the next one looks, as it
would after a real wait, so the takeover goes through the lease check
without the test waiting out twelve leases. On Redis the lease is the
server's idle time, which no client clock moves, so each takeover waits a
real lease; there the workers die at four points only — every stage once,
every kind of point at least once. Redis' takeover path (XAUTOCLAIM of an
idle entry) is the same for every stage, and agentrt's own crash test kills
Redis workers at twenty random moments; the full grid on SQLite covers what
the stages themselves do at each point.
"""

from __future__ import annotations

import asyncio
import dataclasses
import faulthandler
import multiprocessing as mp
import os
import signal
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from stagedkit import example_spec, staged_agent

from agentrt.pipeline import Pipeline, PipelineRunner, Stage, StageContext
from agentrt.queues import Delivery, Emit, EpochClock, QueueBackend, StageState, open_queue
from fixbugs.queued import QUEUE_STAGES

pytestmark = pytest.mark.needs_root

POINTS = ("mid", "before_record", "after_record")
FULL_GRID = tuple((s, p) for s in QUEUE_STAGES for p in POINTS)
# every stage once, every kind of point at least once (see the module's docstring)
REDIS_KILLS = (
    ("analysis", "mid"),
    ("reproduction", "before_record"),
    ("root_cause", "after_record"),
    ("repair", "mid"),
)
# the points that leave the stage's effect unrecorded: that stage runs again
REDONE = frozenset({"mid", "before_record"})
# which agent stages' events belong to each queue stage
AGENT_OF = {
    "analysis": {"analysis", "file_relevance"},
    "reproduction": {"reproduction"},
    "root_cause": {"root_cause", "fix"},
    "repair": {"validation"},
}
TARGET = "bug0"
BUGS = ("bug0", "bug1")
# longer than a stage's run: the analysis stage now starts the isolated reader process
# (about 1.2 s of CPU, more under a loaded CI); a lease that lapses mid-stage redelivers
LEASE_S = 4.0


class _LaterClock(EpochClock):
    """Epoch time ``ahead_s`` later: a worker that starts as if a lease had passed."""

    def __init__(self, ahead_s: float) -> None:
        self.ahead_s = ahead_s

    def now(self) -> float:
        return time.time() + self.ahead_s


def _open(url: str, ahead_s: float = 0.0) -> QueueBackend:
    clock = _LaterClock(ahead_s) if ahead_s else None
    return open_queue(url, clock=clock, max_deliveries=20, namespace="stagedcrash")


def _log(path: str, line: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def _die(log: str, what: str) -> None:
    _log(log, f"kill {os.getpid()} {what}")
    os.kill(os.getpid(), signal.SIGKILL)


def _child(url: str, log: str, kill: tuple[str, str] | None, ahead_s: float) -> None:
    """A worker process for every stage; SIGKILLs itself at ``kill`` on the target bug.

    ``ahead_s``: how far ahead of the epoch this worker's queue clock reads."""

    async def serve() -> None:
        _dump_on_sigusr1(f"{log}.{os.getpid()}.stacks")
        q = _open(url, ahead_s)
        seen_start: set[str] = set()

        def publish(job: str, ev: dict[str, Any]) -> None:
            if kill is None or job != TARGET or kill[1] != "mid":
                return
            if ev["stage"] not in AGENT_OF[kill[0]]:
                return
            if ev["kind"] == "stage_started":
                seen_start.add(ev["stage"])
            elif seen_start:
                _die(log, f"{kill[0]} mid")

        agent = staged_agent(q.clock, publish, sandbox_slots=2, lease_s=LEASE_S)
        base = agent.pipeline()

        def wrap(st: Stage) -> Stage:
            async def run(sctx: StageContext) -> Mapping[str, Any]:
                _log(log, f"start {os.getpid()} {sctx.item} {sctx.stage} {sctx.delivery_id}")
                res: Mapping[str, Any] = await st.run(sctx)
                if kill == (sctx.stage, "before_record") and sctx.item == TARGET:
                    _die(log, f"{sctx.stage} before_record")
                return res

            return dataclasses.replace(st, run=run)

        pipeline = Pipeline([wrap(s) for s in base.stages], name=base.name, capacity=base.capacity)
        complete = q.complete

        async def complete_then_die(
            d: Delivery, result: Mapping[str, Any], emits: Sequence[Emit] = ()
        ) -> bool:
            applied = await complete(d, result, emits)
            if kill == (d.message.stage, "after_record") and d.message.item == TARGET:
                _die(log, f"{d.message.stage} after_record")
            return applied

        q.complete = complete_then_die  # type: ignore[method-assign,assignment]
        try:
            await PipelineRunner(pipeline, q, poll_s=0.05).run(until_idle=kill is None)
        finally:
            await q.aclose()

    asyncio.run(serve())


def _dump_on_sigusr1(path: str) -> None:
    """On SIGUSR1, write every asyncio task's and thread's stack to ``path`` (for a hang)."""
    loop = asyncio.get_running_loop()

    def dump() -> None:
        with open(path, "w") as f:
            for task in asyncio.all_tasks(loop):
                print(f"--- {task.get_name()}", file=f)
                # the whole await chain (a task's own stack shows only its top frame)
                aw: Any = task.get_coro()
                while aw is not None:
                    frame = getattr(aw, "cr_frame", None) or getattr(aw, "gi_frame", None)
                    if frame is None:
                        print(f"    awaiting {aw!r}", file=f)
                        break
                    print(f"    {frame.f_code.co_filename}:{frame.f_lineno}", file=f)
                    aw = getattr(aw, "cr_await", None) or getattr(aw, "gi_yieldfrom", None)
            f.flush()
            faulthandler.dump_traceback(file=f, all_threads=True)

    loop.add_signal_handler(signal.SIGUSR1, dump)


def _hang_report(url: str, proc: Any, log: str) -> str:
    """What a worker that did not finish was waiting on, and what the queue held."""
    stacks = Path(f"{log}.{proc.pid}.stacks")
    os.kill(proc.pid, signal.SIGUSR1)
    for _ in range(50):  # the dump is written by the worker's loop, if it runs
        proc.join(0.1)
        if stacks.exists() and stacks.stat().st_size:
            break
    proc.kill()
    proc.join()
    out = [stacks.read_text() if stacks.exists() else "no stack dump (the loop did not run)"]
    out.append(f"records: {asyncio.run(_state(url))[2]}")
    if url.startswith("redis"):
        import redis

        r = redis.Redis.from_url(url)
        for key in sorted(r.keys("*")):
            kind = r.type(key).decode()
            val: Any = {
                "hash": r.hgetall,
                "zset": lambda k: r.zrange(k, 0, -1),
                "set": r.smembers,
                "string": r.get,
                "stream": r.xrange,
            }.get(kind, lambda _k: "?")(key)
            out.append(f"{key!r} {kind}: {val!r}")
            if kind == "stream" and b":q:" in key:
                try:
                    out.append(f"  pending: {r.xpending_range(key, 'agentrt', '-', '+', 100)}")
                except redis.ResponseError as exc:
                    out.append(f"  pending: {exc}")
        r.close()
    out.append(Path(log).read_text())
    return "\n".join(out)


async def _seed(url: str, tmp: Path) -> None:
    q = _open(url)
    agent = staged_agent(q.clock, lambda _j, _e: None)
    runner = PipelineRunner(agent.pipeline(), q)
    for bug in BUGS:
        await runner.submit(bug, bug, example_spec(tmp / bug))
    await q.aclose()


async def _state(url: str) -> tuple[list[tuple[str, str]], dict[str, Any], list[Any]]:
    q = _open(url)
    try:
        effects = await q.effects()  # type: ignore[attr-defined]
        finals = {b: await q.results(b, list(QUEUE_STAGES)) for b in BUGS}
        return effects, finals, await q.records()
    finally:
        await q.aclose()


def run_kills(url: str, tmp: Path, plan: Sequence[tuple[str, str]], *, skip_leases: bool) -> None:
    """Kill one worker at each (stage, point) of ``plan``, in order, then drain.

    With ``skip_leases`` (a backend whose leases read the client's clock), the
    n-th worker's clock reads n leases ahead, so a dead worker's lease has
    lapsed when the next worker looks."""
    log = str(tmp / "exec.log")
    asyncio.run(_seed(url, tmp))
    ctx = mp.get_context("fork")
    step = LEASE_S if skip_leases else 0.0
    for n, (stage, point) in enumerate(plan, start=1):
        proc = ctx.Process(target=_child, args=(url, log, (stage, point), n * step))
        proc.start()
        proc.join(180)
        if proc.exitcode is None:
            pytest.fail(f"no kill at {stage} {point}:\n{_hang_report(url, proc, log)}")
        assert proc.exitcode == -signal.SIGKILL, f"no kill at {stage} {point}"
    final = ctx.Process(target=_child, args=(url, log, None, (len(plan) + 1) * step))
    final.start()
    final.join(300)
    if final.exitcode is None:
        pytest.fail(f"the last worker did not drain the queue:\n{_hang_report(url, final, log)}")
    assert final.exitcode == 0

    lines = Path(log).read_text().splitlines()
    kills = [" ".join(ln.split()[2:]) for ln in lines if ln.startswith("kill")]
    assert kills == [f"{s} {p}" for s, p in plan]

    effects, finals, records = asyncio.run(_state(url))
    # nothing lost: both bugs finished every stage with a validated fix
    for bug in BUGS:
        assert set(finals[bug]) == set(QUEUE_STAGES)
        report = finals[bug]["repair"]["report"]
        assert report["validated"] is True
        assert report["patch"].startswith("--- a/shop/pricing.py")
    assert [r for r in records if r.state is not StageState.DONE] == []
    assert len(records) == len(BUGS) * len(QUEUE_STAGES)
    # nothing duplicated: one effect per (bug, stage) ...
    assert len(effects) == len(set(effects)) == len(BUGS) * len(QUEUE_STAGES)
    # ... and every run of a (bug, stage) was a delivery of one message
    receipts: dict[tuple[str, str], set[str]] = defaultdict(set)
    runs: dict[tuple[str, str], int] = defaultdict(int)
    for ln in lines:
        if ln.startswith("start"):
            _, _pid, item, stage, receipt = ln.split()
            receipts[(item, stage)].add(receipt)
            runs[(item, stage)] += 1
    twice = {k: r for k, r in receipts.items() if len(r) != 1}
    assert not twice, f"runs of one (bug, stage) from two messages: {twice}\n{_failures(records)}"
    # the killed stages of the target were redone (mid and before_record kills)
    for stage in QUEUE_STAGES:
        redone = sum(1 for s, p in plan if s == stage and p in REDONE)
        assert runs[(TARGET, stage)] >= 1 + redone


def _failures(records: Sequence[Any]) -> str:
    """Each record's attempts and last error: why a stage ran again, when it did."""
    return "\n".join(f"{r.item} {r.stage} attempts={r.attempts} error={r.error}" for r in records)


def test_sigkill_at_stage_boundaries_sqlite(tmp_path: Path) -> None:
    run_kills(f"sqlite:///{tmp_path / 'q.db'}", tmp_path, FULL_GRID, skip_leases=True)


@pytest.mark.xfail(
    strict=False,
    reason="open bug: on Redis a downstream stage sometimes runs from two messages (seen "
    "2026-12-06 on an idle clean clone: bug0 root_cause from two message ids 0.6 s apart, "
    "reproduction redone after its kill); 1 run in 3. Possibly a stage attempt failing on "
    "CPython's AST SystemError (gh-106905, the staged service test's cause, serialized by "
    "agentrt.parse_python since e1b4c6e) and redelivered; not yet confirmed on Redis",
)
def test_sigkill_at_stage_boundaries_redis(tmp_path: Path, redis_url: str) -> None:
    run_kills(redis_url, tmp_path, REDIS_KILLS, skip_leases=False)
