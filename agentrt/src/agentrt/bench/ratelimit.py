"""`ratelimit`: do N worker processes together stay under one provider's TPM?

A real simulator server enforces RPM/TPM like OpenAI (429 with
``Retry-After`` past the limit). Four worker processes each run a
:class:`~agentrt.flow.RateLimitedModel` that sends as fast as its rate limits
allow for one (time-scaled) minute, with demand well above the limit. Two
runs, each against a fresh simulator:

* unshared: each worker keeps the provider's limits in its own memory (what
  a replicated service without shared state does): together they send up
  to 4x the limit and the provider refuses the excess;
* shared: the workers reserve from the same buckets in Redis (atomic Lua
  scripts, Redis's clock).

The 429 share is counted by the simulator: rate-limit refusals over all
requests it received.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import multiprocessing
import shutil
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import httpx

from agentrt._clock import ScaledClock
from agentrt._errors import ProviderError, UserError
from agentrt._json import JsonObject
from agentrt.bench.harness import BenchResult, benchmark
from agentrt.bench.simproc import free_port, running_simulator
from agentrt.flow._gate import LocalRateGate, LocalRetryBudget, RateGate
from agentrt.flow._rate_model import RateLimitedModel
from agentrt.flow._retry import RetryBudget
from agentrt.flow._retry_model import RetryingModel
from agentrt.llm._openai_backend import OpenAIModel
from agentrt.llm._types import ChatRequest

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RatelimitOptions", "run_ratelimit"]


@contextlib.contextmanager
def _redis_server() -> Iterator[str]:
    """A private redis-server on a free port (or the machine's one if none is installed)."""
    exe = shutil.which("redis-server")
    if exe is None:
        yield "redis://127.0.0.1:6379/0"
        return
    port = free_port()
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        import socket

        for _ in range(500):  # waiting for the child to listen
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.01)
        else:
            raise UserError("redis-server did not start")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(10)


@dataclass(frozen=True, slots=True)
class RatelimitOptions:
    workers: int = 4  # processes
    concurrency: int = 8  # callers in each
    rpm: int = 10_000  # the provider's limits
    tpm: int = 60_000
    max_tokens: int = 200
    duration_s: float = 60.0  # model seconds
    time_scale: float = 6.0


@dataclass(frozen=True, slots=True)
class _WorkerJob:
    """What one worker process is given (pickled to it)."""

    worker: int
    base_url: str
    redis_url: str | None  # None: limits local to the process
    key: str
    model: str
    opts: RatelimitOptions


@dataclass(frozen=True, slots=True)
class _Soak:
    requests: int  # counted by the simulator
    rate_limited: int
    share_429: float
    tokens_in: int
    tokens_out: int
    calls_ok: int
    calls_failed: int


def _worker(job: _WorkerJob) -> dict[str, int]:
    return asyncio.run(_worker_main(job))


async def _worker_main(a: _WorkerJob) -> dict[str, int]:
    o = a.opts
    scale = o.time_scale
    clock = ScaledClock(scale)
    inner = OpenAIModel(model=a.model, base_url=a.base_url, clock=clock)
    redis: Redis | None = None
    rate: RateGate
    if a.redis_url:
        from redis.asyncio import Redis

        from agentrt.flow._redis_store import RedisRateGate

        redis = Redis.from_url(a.redis_url)
        rate = RedisRateGate(redis, a.key, rpm=o.rpm, tpm=o.tpm, time_scale=scale)
    else:
        rate = LocalRateGate(o.rpm, o.tpm, clock=clock)
    model = RetryingModel(
        RateLimitedModel(inner, rate, clock=clock),
        clock=clock,
        budget=LocalRetryBudget(RetryBudget()),
    )
    counts = {"ok": 0, "failed": 0}
    end = clock.now() + o.duration_s
    prompt = "tell me about rate limits " * 20

    async def loop(i: int) -> None:
        n = 0
        while clock.now() < end:
            n += 1
            req = ChatRequest.of(f"{a.worker}/{i}/{n} {prompt}", max_tokens=o.max_tokens)
            try:
                await model.complete(req)
                counts["ok"] += 1
            except ProviderError:
                counts["failed"] += 1

    try:
        async with asyncio.TaskGroup() as tg:
            for i in range(o.concurrency):
                tg.create_task(loop(i))
    finally:
        await model.aclose()
        if redis is not None:
            await redis.aclose()
    return counts


@contextlib.asynccontextmanager
async def _sim(opts: RatelimitOptions) -> AsyncIterator[str]:
    overrides = {
        "rpm": opts.rpm,
        "tpm": opts.tpm,
        "slots": 1000,
        "ttft_base_s": 0.2,
        "decode_tps": 200.0,
    }
    async with running_simulator(
        "ratelimited", time_scale=opts.time_scale, overrides=overrides
    ) as base:
        yield base


async def _soak(opts: RatelimitOptions, redis_url: str | None) -> _Soak:
    async with _sim(opts) as base:
        key = f"agentrt:bench:{uuid.uuid4().hex}"
        jobs = [_WorkerJob(w, base, redis_url, key, "sim-model", opts) for w in range(opts.workers)]
        ctx = multiprocessing.get_context("spawn")
        loop = asyncio.get_running_loop()
        with concurrent.futures.ProcessPoolExecutor(len(jobs), ctx) as pool:
            results = await asyncio.gather(*(loop.run_in_executor(pool, _worker, j) for j in jobs))
        async with httpx.AsyncClient() as http:
            stats = (await http.get(base.removesuffix("/v1") + "/sim/stats")).json()
    requests = int(stats["requests"])
    limited = int(stats["rejected"].get("rate_limited", 0))
    return _Soak(
        requests=requests,
        rate_limited=limited,
        share_429=limited / requests if requests else 0.0,
        tokens_in=int(stats["tokens_in"]),
        tokens_out=int(stats["tokens_out"]),
        calls_ok=sum(r["ok"] for r in results),
        calls_failed=sum(r["failed"] for r in results),
    )


@benchmark(
    "ratelimit",
    "4 worker processes at one provider's TPM for a minute: 429 share with and without Redis",
    RatelimitOptions,
)
async def run_ratelimit(opts: RatelimitOptions) -> BenchResult:
    wall0 = time.monotonic()
    unshared = await _soak(opts, None)
    with _redis_server() as url:
        shared = await _soak(opts, url)
    figures: JsonObject = {
        "share_429_shared": shared.share_429,
        "share_429_unshared": unshared.share_429,
        "shared": asdict(shared),
        "unshared": asdict(unshared),
        "tpm": opts.tpm,
        "workers": opts.workers,
    }
    return BenchResult(
        "ratelimit",
        figures,
        ratios=(
            (
                "429 share, unshared / shared",
                unshared.share_429 / max(shared.share_429, 1e-9),
            ),
        ),
        checks=(
            ("< 1% 429s with shared limits", shared.share_429 < 0.01),
            ("the unshared run overshoots (>= 1% 429s)", unshared.share_429 >= 0.01),
        ),
        notes=(
            f"{opts.workers} worker processes x {opts.concurrency} concurrent callers, "
            f"limits {opts.rpm} RPM / {opts.tpm} TPM, {opts.duration_s} model-s at "
            f"time scale {opts.time_scale}; 429s counted by the simulator",
            f"wall time {time.monotonic() - wall0:.0f} s",
        ),
    )
