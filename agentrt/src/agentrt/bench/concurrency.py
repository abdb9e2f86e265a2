"""`concurrency`: does the adaptive limit find the knee that a static sweep finds?

Part 1 runs a real simulator server whose profile (``knee``) hides a
throughput knee: past a number of concurrent calls, throughput flattens
and then falls while latency climbs. It sweeps static limits, each run for
the same simulated duration with a full backlog of calls, then runs the
adaptive limit (starting from 1, knowing nothing) on the same workload.
Throughput and p95 latency are measured over the same steady-state span
of every run (after the first third, which the adaptive run spends
searching), so the figures compare like with like.

Part 2 repeats the sweep on the embedded llama.cpp model. One process
runs one generation at a time, so concurrency comes from several worker
processes each holding the model with one thread; on this machine the
knee is where the CPU cores run out. The knee is the smallest concurrency
whose throughput is within 5% of the best; the adaptive limit reported is
the one it held for most of the second half of its run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import math
import multiprocessing
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentrt._clock import Clock, ScaledClock, SystemClock
from agentrt._json import JsonValue
from agentrt.bench.harness import BenchResult, benchmark
from agentrt.bench.simproc import running_simulator
from agentrt.flow._adaptive import AdaptiveLimit, LimitAlgorithm, StaticLimit
from agentrt.flow._limiter import ConcurrencyLimiter
from agentrt.llm._client import ModelClient
from agentrt.llm._openai_backend import OpenAIModel
from agentrt.llm._types import ChatRequest
from agentrt.metrics._recorder import percentile
from agentrt.sim import get_profile

if TYPE_CHECKING:
    from agentrt.llm._llama_backend import LlamaModel

__all__ = ["ConcurrencyOptions", "run_concurrency"]

Call = Callable[[int], Awaitable[int]]  # call number -> output tokens


@dataclass(frozen=True, slots=True)
class RunStats:
    limit: float
    throughput: float  # output tokens per (model) second, steady state
    p95_s: float
    calls: int
    final_limit: int


async def _run(
    algorithm: LimitAlgorithm, call: Call, clock: Clock, duration_s: float, workers: int
) -> tuple[RunStats, ConcurrencyLimiter]:
    """Keep a backlog of ``workers`` callers on the limiter for ``duration_s``."""
    limiter = ConcurrencyLimiter(algorithm, clock=clock)
    t0 = clock.now()
    measure_from = t0 + duration_s / 3
    done: list[tuple[float, float, int]] = []  # (start, end, tokens)
    counter = iter(range(10**9))
    stop = False

    async def worker() -> None:
        while not stop:
            async with limiter.permit() as permit:
                if stop:
                    return
                start = clock.now()
                tokens = await call(next(counter))
                end = clock.now()
                permit.succeeded(work=1.0 + tokens)
                done.append((start, end, tokens))

    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(worker()) for _ in range(workers)]
        await clock.sleep(duration_s)
        stop = True
        t_end = clock.now()
        for t in tasks:
            t.cancel()
    steady = [d for d in done if d[0] >= measure_from and d[1] <= t_end]
    span = t_end - measure_from
    tokens = sum(d[2] for d in steady)
    lats = [d[1] - d[0] for d in steady]
    limit = float(algorithm.limit)
    if isinstance(algorithm, AdaptiveLimit):
        limit = _held_limit(algorithm.history, measure_from, t_end)
    stats = RunStats(
        limit=limit,
        throughput=tokens / span if span > 0 else 0.0,
        p95_s=percentile(lats, 95) or math.nan,
        calls=len(steady),
        final_limit=algorithm.limit,
    )
    return stats, limiter


def _held_limit(history: list[tuple[float, int]], start: float, end: float) -> float:
    """The limit held for the most time in [start, end] (clock times, like the history)."""
    held: dict[int, float] = {}
    points = [*history, (end, history[-1][1])]
    for (t, lim), (t_next, _) in itertools.pairwise(points):
        lo, hi = max(t, start), min(t_next, end)
        if hi > lo:
            held[lim] = held.get(lim, 0.0) + hi - lo
    return float(max(held, key=lambda k: held[k])) if held else float(history[-1][1])


def _knee(sweep: list[RunStats]) -> RunStats:
    best = max(s.throughput for s in sweep)
    return min((s for s in sweep if s.throughput >= 0.95 * best), key=lambda s: s.limit)


# -- the embedded model in worker processes ----------------------------------

_WORKER_MODEL: LlamaModel | None = None


def _worker_load() -> None:
    global _WORKER_MODEL
    from agentrt.llm._llama_backend import LlamaModel

    _WORKER_MODEL = LlamaModel(n_threads=1, seed=0)
    asyncio.run(_WORKER_MODEL.load())


def _worker_generate(prompt: str, max_tokens: int) -> int:
    assert _WORKER_MODEL is not None
    req = ChatRequest.of(prompt, max_tokens=max_tokens, temperature=0.0, seed=0)
    result = asyncio.run(_WORKER_MODEL.complete(req))
    return int(result.usage.output_tokens)


@dataclass(frozen=True, slots=True)
class ConcurrencyOptions:
    profile: str = "knee"  # the simulator profile
    time_scale: float = 10.0
    limits: tuple[int, ...] = (2, 4, 6, 8, 10, 11, 12, 14, 16, 20, 24)  # the static sweep
    duration_s: float = 60.0  # model seconds per static run (the adaptive run: 3x)
    max_tokens: int = 100
    plot: str = "concurrency.png"
    local: bool = True  # part 2: the embedded llama.cpp model
    local_processes: int = 3
    local_max_tokens: int = 16
    local_duration_s: float = 30.0


async def _local_part(opts: ConcurrencyOptions) -> tuple[list[RunStats], RunStats]:
    procs = opts.local_processes
    max_tokens = opts.local_max_tokens
    duration = opts.local_duration_s
    ctx = multiprocessing.get_context("spawn")
    loop = asyncio.get_running_loop()
    clock = SystemClock()
    prompt = "Write a short paragraph about rivers, number {}."
    with concurrent.futures.ProcessPoolExecutor(procs, ctx, initializer=_worker_load) as pool:

        async def call(i: int) -> int:
            return await loop.run_in_executor(
                pool, _worker_generate, prompt.format(i % 7), max_tokens
            )

        await asyncio.gather(*(call(i) for i in range(procs)))  # start and load all
        sweep = []
        for c in range(1, procs + 1):
            stats, _ = await _run(StaticLimit(c), call, clock, duration, c)
            sweep.append(stats)
        adaptive, _ = await _run(
            AdaptiveLimit(max_limit=procs), call, clock, duration * 3, procs * 2
        )
    return sweep, adaptive


def _plot(path: Path, sweep: list[RunStats], adaptive: RunStats, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax1 = plt.subplots(figsize=(7, 4.2))
    xs = [s.limit for s in sweep]
    ax1.plot(xs, [s.throughput for s in sweep], "o-", color="tab:blue", label="throughput")
    ax1.plot([adaptive.limit], [adaptive.throughput], "*", ms=14, color="tab:blue")
    ax1.set_xlabel("concurrency limit")
    ax1.set_ylabel("output tokens / s", color="tab:blue")
    ax2 = ax1.twinx()
    ax2.plot(xs, [s.p95_s for s in sweep], "s--", color="tab:red", label="p95 latency")
    ax2.plot([adaptive.limit], [adaptive.p95_s], "*", ms=14, color="tab:red")
    ax2.set_ylabel("p95 latency, s", color="tab:red")
    ax1.set_title(title + " (stars: adaptive limit)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


@benchmark(
    "concurrency",
    "static concurrency sweep vs the adaptive limit: simulator knee, then the local model",
    ConcurrencyOptions,
)
async def run_concurrency(opts: ConcurrencyOptions) -> BenchResult:
    scale = opts.time_scale
    profile = get_profile(opts.profile)
    limits = opts.limits
    duration = opts.duration_s
    max_tokens = opts.max_tokens
    clock = ScaledClock(scale)
    wall0 = time.monotonic()
    async with running_simulator(profile.name, time_scale=scale) as base_url:
        client: ModelClient = OpenAIModel(model=profile.models[0], base_url=base_url, clock=clock)

        async def call(i: int) -> int:
            r = await client.complete(ChatRequest.of(f"item {i}", max_tokens=max_tokens))
            return r.usage.output_tokens

        try:
            await call(-1)  # connection set-up
            sweep = []
            for lim in limits:
                stats, _ = await _run(StaticLimit(lim), call, clock, duration, lim)
                sweep.append(stats)
            workers = max(limits) * 2
            adaptive, _ = await _run(AdaptiveLimit(), call, clock, duration * 3, workers)
        finally:
            await client.aclose()
    best = max(sweep, key=lambda s: s.throughput)
    plot_path = Path(opts.plot)
    _plot(plot_path, sweep, adaptive, f"simulator profile {profile.name!r}")
    figures: dict[str, JsonValue] = {
        "best_static": {"limit": best.limit, "throughput": best.throughput, "p95_s": best.p95_s},
        "adaptive": {
            "throughput": adaptive.throughput,
            "p95_s": adaptive.p95_s,
            "final_limit": adaptive.final_limit,
            "held_limit": adaptive.limit,
        },
        "sweep": [
            {"limit": s.limit, "throughput": s.throughput, "p95_s": s.p95_s, "calls": s.calls}
            for s in sweep
        ],
        "plot": str(plot_path),
    }
    thr_ratio = adaptive.throughput / best.throughput
    p95_ratio = adaptive.p95_s / best.p95_s
    ratios: list[tuple[str, float]] = [
        ("adaptive/best static throughput", thr_ratio),
        ("adaptive/best static p95", p95_ratio),
    ]
    checks: list[tuple[str, bool]] = [
        ("adaptive throughput >= 95% of best static", thr_ratio >= 0.95),
        ("adaptive p95 <= 1.25x best static p95", p95_ratio <= 1.25),
    ]
    notes = [
        f"simulator at time scale {scale:g}; each static run {duration:g} model-s, adaptive "
        f"{duration * 3:g} model-s; figures over the last two thirds of each run",
    ]
    if opts.local:
        local_sweep, local_adaptive = await _local_part(opts)
        knee = _knee(local_sweep)
        local_plot = plot_path.with_name(plot_path.stem + "_local" + plot_path.suffix)
        _plot(local_plot, local_sweep, local_adaptive, "embedded llama.cpp model")
        figures["local_model"] = {
            "knee": knee.limit,
            "adaptive_limit": local_adaptive.limit,
            "adaptive_final_limit": local_adaptive.final_limit,
            "sweep": [
                {"limit": s.limit, "throughput": s.throughput, "p95_s": s.p95_s}
                for s in local_sweep
            ],
            "adaptive_throughput": local_adaptive.throughput,
            "plot": str(local_plot),
        }
        ratios.append(("local adaptive limit / knee", local_adaptive.limit / knee.limit))
        checks.append(
            (
                "local adaptive limit within 10% of the knee",
                abs(local_adaptive.limit - knee.limit) <= 0.1 * knee.limit,
            )
        )
        notes.append(
            f"local model: {opts.local_processes} worker processes x 1 thread each on "
            f"{os.cpu_count()} CPUs; knee = smallest concurrency within 5% of the best "
            "throughput; adaptive limit = the limit held longest in its run's last two thirds"
        )
    notes.append(f"wall time {time.monotonic() - wall0:.0f} s")
    return BenchResult("concurrency", figures, tuple(ratios), tuple(checks), tuple(notes))
