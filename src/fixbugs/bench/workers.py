"""``fixbugs bench workers``: how throughput grows with worker processes on one queue.

Each run submits its bugs to a fresh shared queue (a private redis-server
on a free port when ``redis-server`` is on PATH, else a SQLite file), then
starts that many real ``fixbugs worker --drain`` processes at once and
waits for them to empty it. Two workloads, at every worker count:

* **model-bound**: copies of the bundled example (each with its own seed,
  :func:`fixbugs.bench.service._bug`), with the provider simulator as one
  server process (``agentrt sim serve``) that every worker calls, a hosted
  model's latency (``hosted``: about 1 s plus prefill to the first token,
  then 50 tokens/s) and a concurrency limit stated and set above what the
  workers can ask for; the model stages' waits dominate a bug's time;
* **sandbox-bound**: real bugs (``../shared/bugs/dev`` by default) with
  their failing tests, ``--no-model``: every stage is CPU work, the tests
  and the repair's candidates in the sandbox.

Both run their tests under one interpreter: the cases' test environment
(:func:`fixbugs.pyenv.testenv.ensure_python_env`, as ``fixbugs eval`` builds
it), built once before anything is timed. Each worker has the same fixed
slots at every count (:class:`~fixbugs.bench.workers_figures.WorkerShape`:
by default 2 model slots and 1 sandbox slot), which is what a worker *is*
in a deployment: a worker sized to the whole machine (``fixbugs worker``'s
defaults) would leave a second one nothing to add. Each bug has its own
index cache, as a service job does, so no run reads another's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentrt import UserError
from agentrt.pipeline import PipelineRunner
from agentrt.queues import EpochClock, StageState, open_queue
from fixbugs.bench.service import _bug
from fixbugs.bench.workers_figures import (
    WORKLOADS,
    BugOutcome,
    Measured,
    WorkersFigures,
    WorkerShape,
    figures,
)
from fixbugs.errors import InputError
from fixbugs.eval.case import Case
from fixbugs.queued.pipeline import QUEUE_STAGES, StagedAgent, StagedConfig
from fixbugs.queued.spec import BugSpec
from fixbugs.run.context import AgentOptions
from fixbugs.sandbox.hosttools import ToolRun, host_env, run_tool

__all__ = [
    "DEFAULT_CASES",
    "DEFAULT_SANDBOX_CASES",
    "DEFAULT_SHAPE",
    "ScaleOptions",
    "fixbugs_argv",
    "parse_counts",
    "run_workers_bench",
]

SIM_MODEL = "sim-model"
DEFAULT_SHAPE = WorkerShape(model_slots=2, sandbox_slots=1)
DEFAULT_CASES = Path("../shared/bugs/dev")
# The dev cases whose repair ends at a validated fix with no model (MEASUREMENTS.md,
# "dev's validated fixes"): a fixed amount of work per bug. A bug whose repair runs to
# its wall-clock budget instead takes that long however loaded the cores are, so its
# throughput would grow with workers whether or not a core is left.
DEFAULT_SANDBOX_CASES = (
    "thefuck-7",
    "thefuck-15",
    "thefuck-19",
    "thefuck-21",
    "thefuck-25",
    "thefuck-29",
    "thefuck-32",
)


@dataclass(frozen=True, slots=True)
class ScaleOptions:
    counts: tuple[int, ...] = (1, 2, 4)
    bugs: int = 4  # per worker, model-bound: a run of w workers gets w x bugs
    sandbox_bugs: int = 2  # per worker, sandbox-bound
    cases: Path = DEFAULT_CASES
    case_ids: tuple[str, ...] = DEFAULT_SANDBOX_CASES  # () : every case of ``cases``
    shape: WorkerShape = DEFAULT_SHAPE
    profile: str = "hosted"
    model_limit: int = 64  # the simulator's requests in service at once
    workloads: tuple[str, ...] = WORKLOADS
    worker_timeout_s: float = 3600.0


def parse_counts(text: str) -> tuple[int, ...]:
    """``"1,2,4"`` → (1, 2, 4): distinct positive counts, ascending."""
    try:
        counts = sorted({int(p) for p in text.split(",") if p.strip()})
    except ValueError:
        raise InputError(f"--workers {text!r}: give worker counts like 1,2,4") from None
    if not counts or counts[0] < 1:
        raise InputError(f"--workers {text!r}: give worker counts like 1,2,4, each at least 1")
    return tuple(counts)


# -- the machine ------------------------------------------------------------
def _cpu_ticks() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat (None elsewhere)."""
    try:
        with open("/proc/stat") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # guest time is counted inside user already
    return total - idle, total


def _busy_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    if before is None or after is None or after[1] <= before[1]:
        return None
    return round((after[0] - before[0]) / (after[1] - before[1]), 2)


@contextlib.asynccontextmanager
async def _queue_store(root: Path) -> AsyncIterator[tuple[str, str]]:
    """A fresh queue: a private redis-server on a free port, else a SQLite file.

    The server is started through the host-tool runner as a daemon (its
    own pid file, its data nowhere: no save, no append log) and shut
    down when the run ends.
    """
    exe = shutil.which("redis-server")
    if exe is None:
        yield f"sqlite:///{root / 'queue.db'}", "sqlite"
        return
    from redis.asyncio import Redis
    from redis.exceptions import ConnectionError as RedisDown

    from agentrt.bench.simproc import free_port

    port = free_port()
    argv = [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    argv += ["--dir", str(root), "--daemonize", "yes", "--pidfile", str(root / "redis.pid")]
    argv += ["--logfile", str(root / "redis.log")]
    started = await asyncio.to_thread(run_tool, argv, timeout_s=30)
    if not started.ok:
        said = (started.said().splitlines() or ["no output"])[-1]
        raise UserError(f"redis-server did not start: {said}")
    url = f"redis://127.0.0.1:{port}/0"
    client = Redis.from_url(url)
    try:
        for _ in range(1000):  # the daemon's start-up: it listens within moments
            try:
                await client.ping()
                break
            except RedisDown:
                await asyncio.sleep(0.01)
        else:
            raise UserError(f"redis-server on port {port} did not answer")
        yield url, "redis"
    finally:
        with contextlib.suppress(RedisDown):
            await client.shutdown(nosave=True)
        await client.aclose()


def _config_file(path: Path, base_url: str) -> Path:
    """The workers' model configuration: the simulator, trusted high (every model step runs)."""
    path.write_text(
        "[endpoints.sim]\n"
        'kind = "openai"\n'
        f"base_url = {json.dumps(base_url)}\n"
        f"model = {json.dumps(SIM_MODEL)}\n"
        'api_key = "simulated"\n'
        'trust = "high"\n'
        "\n[roles]\n"
        'default = "sim"\n'
    )
    return path


def fixbugs_argv() -> list[str]:
    """How to start ``fixbugs`` with this interpreter: its console script, else the module."""
    script = Path(sys.executable).parent / "fixbugs"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from fixbugs.cli import main; main()"]


# -- the bugs ----------------------------------------------------------------
# A run of w workers gets w copies of one list of ``per_worker`` bugs, so every count
# gives each worker the same work, and the pipeline's fill and drain weigh the same.
def _model_bugs(root: Path, per_worker: int, workers: int) -> list[BugSpec]:
    specs = []
    for i in range(per_worker * workers):
        seed = i % per_worker + 1  # the list's own seeds, again for each worker
        spec = _bug(root / f"bug{i}", big=False, slow_tests=0, modules=0, seed=seed)
        specs.append(spec.model_copy(update={"index_dir": root / f"bug{i}" / "index"}))
    return specs


def _sandbox_bugs(
    root: Path, cases: Sequence[Case], per_worker: int, workers: int
) -> list[BugSpec]:
    from fixbugs.eval.archive import extract_tree

    specs = []
    for i in range(per_worker * workers):
        case = cases[i % per_worker % len(cases)]
        tree = root / f"bug{i}" / "repo"
        tree.mkdir(parents=True)
        extract_tree(case.dir / case.archive, tree)
        specs.append(
            BugSpec(
                title=f"{case.id} (bug {i})",
                report=case.report_file or case.dir / "report.md",
                repo=tree,
                test=case.test_command or None,
                index_dir=root / f"bug{i}" / "index",
            )
        )
    return specs


# -- one run -------------------------------------------------------------------
async def _never() -> AgentOptions:  # the submitting side runs no stage
    raise AssertionError("the bench only submits")


async def _submit(url: str, specs: Sequence[BugSpec]) -> None:
    q = open_queue(url, clock=EpochClock(), namespace="fixbugs")
    try:
        agent = StagedAgent(
            None,
            _never,
            clock=q.clock,
            publish=lambda _j, _e: None,
            config=StagedConfig(capacity=max(16, len(specs))),
        )
        runner = PipelineRunner(agent.pipeline(), q)
        for i, spec in enumerate(specs):
            await runner.submit(f"bug{i}", f"bug{i}", spec.payload())
    finally:
        await q.aclose()


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What the queue's records say about one run."""

    finished: int
    validated: int
    first_claim: float | None
    last_finish: float | None
    stage_run_s: dict[str, float]  # mean seconds in each stage (claimed -> effect recorded)
    stage_wait_s: dict[str, float]  # mean seconds queued before each stage
    bugs: tuple[BugOutcome, ...]


def _mean(values: Sequence[float | None]) -> float:
    got = [v for v in values if v is not None]
    return round(sum(got) / len(got), 2) if got else 0.0


async def _outcome(url: str, titles: Mapping[str, str]) -> _Outcome:
    """The run's figures from the queue's records, and each bug's verdict from its report."""
    from fixbugs.run.report_schema import ReportModel

    q = open_queue(url, clock=EpochClock(), namespace="fixbugs")
    bugs = []
    try:
        records = await q.records()
        last = QUEUE_STAGES[-1]
        done = [r for r in records if r.stage == last and r.state is StageState.DONE]
        for item, title in titles.items():
            mine = [r for r in records if r.item == item]
            run_s = round(sum(r.run_s or 0.0 for r in mine), 1)
            effect = (await q.results(item, [last])).get(last, {})
            report = effect.get("report") if isinstance(effect, dict) else None
            if report is None:
                states = ", ".join(f"{r.stage} {r.state.value}" for r in mine) or "never claimed"
                bugs.append(BugOutcome(title, "unfinished", states, run_s))
                continue
            model = ReportModel.model_validate(report)
            verdict = model.verdict.value
            bugs.append(BugOutcome(title, verdict, model.validation.summary, run_s))
    finally:
        await q.aclose()
    by_stage = {s: [r for r in records if r.stage == s] for s in QUEUE_STAGES}
    return _Outcome(
        len(done),
        sum(1 for b in bugs if b.verdict == "validated"),
        min((r.started_at for r in records if r.started_at is not None), default=None),
        max((r.finished_at for r in done if r.finished_at is not None), default=None),
        {s: _mean([r.run_s for r in rs]) for s, rs in by_stage.items()},
        {s: _mean([r.wait_s for r in rs]) for s, rs in by_stage.items()},
        tuple(bugs),
    )


def _children_cpu_s() -> float:
    """CPU seconds of this process's waited-for children (and theirs): the workers."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


async def _sim_stats(base_url: str) -> tuple[int | None, int | None]:
    import httpx

    async with httpx.AsyncClient() as http:
        r = await http.get(base_url.removesuffix("/v1") + "/sim/stats", timeout=10)
    stats = r.json()
    return int(stats["peak_active"]), int(stats["peak_queued"])


async def _run_workers(argv: list[str], workers: int, timeout_s: float) -> list[ToolRun]:
    """``workers`` worker processes started together; each ends when the queue is empty."""
    env = host_env()
    return list(
        await asyncio.gather(
            *(
                asyncio.to_thread(run_tool, argv, timeout_s=timeout_s, env=env)
                for _ in range(workers)
            )
        )
    )


async def _one_run(
    workload: str, workers: int, root: Path, opts: ScaleOptions, python: Path, cases: list[Case]
) -> Measured:
    await asyncio.to_thread(root.mkdir, parents=True)
    if workload == "model-bound":
        specs = await asyncio.to_thread(_model_bugs, root, opts.bugs, workers)
    else:
        specs = await asyncio.to_thread(_sandbox_bugs, root, cases, opts.sandbox_bugs, workers)
    shape = opts.shape
    argv = [*fixbugs_argv(), "worker", "--python", str(python), "--drain"]
    argv += ["--sandbox-slots", str(shape.sandbox_slots), "--model-slots", str(shape.model_slots)]
    async with contextlib.AsyncExitStack() as stack:
        url, _kind = await stack.enter_async_context(_queue_store(root))
        base_url = None
        if workload == "model-bound":
            from agentrt.bench.simproc import running_simulator

            base_url = await stack.enter_async_context(
                running_simulator(opts.profile, overrides={"slots": opts.model_limit})
            )
            argv += ["--config", str(_config_file(root / "models.toml", base_url))]
        else:
            argv += ["--no-model"]
        argv += ["--queue", url]
        await _submit(url, specs)
        cpu0, own0, spawned = _cpu_ticks(), _children_cpu_s(), time.time()
        ran = await _run_workers(argv, workers, opts.worker_timeout_s)
        cpu1, own1 = _cpu_ticks(), _children_cpu_s()
        out = await _outcome(url, {f"bug{i}": s.title for i, s in enumerate(specs)})
        peak, queued = await _sim_stats(base_url) if base_url else (None, None)
    errors = tuple(
        f"worker exited {r.returncode}: {(r.said().splitlines() or ['no output'])[-1]}"
        for r in ran
        if not r.ok
    )
    first, last = out.first_claim, out.last_finish
    return Measured(
        workload,
        workers,
        len(specs),
        out.finished,
        out.validated,
        (last - first) if first is not None and last is not None else 0.0,
        (first - spawned) if first is not None else 0.0,
        _busy_share(cpu0, cpu1),
        peak,
        queued,
        errors,
        workers_cpu_s=round(own1 - own0, 1),
        stage_run_s=out.stage_run_s,
        stage_wait_s=out.stage_wait_s,
        bugs=out.bugs,
    )


async def run_workers_bench(
    opts: ScaleOptions, *, on_run: Callable[[Measured], None] | None = None
) -> WorkersFigures:
    """Every workload at every worker count, one run after another; then the figures."""
    from fixbugs.eval.run import load_cases
    from fixbugs.pyenv.testenv import ensure_python_env

    cases = load_cases(opts.cases)
    if opts.case_ids:
        missing = sorted(set(opts.case_ids) - {c.id for c in cases})
        if missing:
            raise InputError(f"--cases {opts.cases}: no case {', '.join(missing)}")
        cases = [c for c in cases if c.id in opts.case_ids]
    envs = {(c.python, tuple(sorted(c.requirements))) for c in cases}
    if len(envs) != 1:
        raise InputError(
            f"--cases {opts.cases}: the cases need {len(envs)} test environments; "
            "the workers share one"
        )
    c0 = cases[0]
    bin_dir = await asyncio.to_thread(ensure_python_env, c0.python, c0.requirements, ("coverage",))
    python = bin_dir / "python"
    measured: list[Measured] = []
    kind = "redis" if shutil.which("redis-server") else "sqlite"
    with tempfile.TemporaryDirectory(prefix="fixbugs-bench-workers-") as tmp:
        for workload in opts.workloads:
            for w in opts.counts:
                m = await _one_run(workload, w, Path(tmp) / f"{workload}-{w}", opts, python, cases)
                measured.append(m)
                if on_run is not None:
                    on_run(m)
    return figures(
        measured,
        sandbox_cases=tuple(cases[i % len(cases)].id for i in range(opts.sandbox_bugs)),
        cores=max(1, os.cpu_count() or 1),
        queue=kind,
        profile=opts.profile,
        model_limit=opts.model_limit,
        shape=opts.shape,
    )
