"""`brownout`: how many requests do retries send when half the answers are 503/529?

The same open-loop workload (``calls`` calls arriving at a fixed rate)
runs twice in one process against the in-process simulator, on one
:class:`~agentrt._clock.FakeClock` so hundreds of simulated seconds take
only CPU time. For a window in the middle, 50% of the simulator's answers
are 503 or 529.

* naive: the official ``openai`` SDK with its default retries (2 retries,
  so 3 attempts, exponential backoff, ``Retry-After`` honoured — only its
  sleep is moved onto the fake clock) under a framework that re-attempts
  every failed call 3 times, 1 s apart: up to 9 requests per call;
* agentrt: the SDK with ``max_retries=0`` inside a
  :class:`~agentrt.flow.RetryingModel` (shared retry budget, full-jitter
  backoff) over a breaker and adaptive throttling.

Attempts are counted by the simulator itself (requests it received).
Recovery is the time from the end of the window until the rate of
successful calls over a 5 s span is back to 95% of its rate before the
window.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import openai
from starlette.applications import Starlette

from agentrt._clock import FakeClock
from agentrt._json import JsonObject
from agentrt.bench.harness import BenchResult, benchmark
from agentrt.flow._breaker import CircuitBreaker
from agentrt.flow._breaker_model import BreakerModel
from agentrt.flow._gate import LocalRetryBudget
from agentrt.flow._retry import RetryBudget
from agentrt.flow._retry_model import RetryingModel
from agentrt.flow._throttle import AdaptiveThrottle
from agentrt.flow._throttle_model import ThrottlingModel
from agentrt.llm._openai_backend import OpenAIModel, prepare_sdk
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest
from agentrt.sim import StreamingASGITransport, create_app, get_profile

__all__ = [
    "BrownoutOptions",
    "FakeClockSDK",
    "agentrt_model",
    "fault_sim",
    "run_brownout",
    "sdk_client",
]

SPAN_S = 5.0


@dataclass(frozen=True, slots=True)
class BrownoutOptions:
    calls: int = 10_000
    rate: float = 50.0  # calls started per second (open loop)
    window_start_s: float = 60.0
    window_end_s: float = 120.0
    failure_share: float = 0.5  # of answers in the window, half 503 and half 529
    max_tokens: int = 16
    seed: int = 7


@dataclass(frozen=True, slots=True)
class _Run:
    attempts: int  # requests the simulator received
    succeeded: int
    failed: int
    recovery_s: float
    faults_injected: int


class FakeClockSDK(openai.AsyncOpenAI):
    """The SDK with its default retry policy; only its sleep uses the fake clock."""

    def __init__(self, clock: FakeClock, **kw: Any) -> None:
        super().__init__(**kw)
        self._fake_clock = clock

    async def _sleep_for_retry(
        self, *, retries_taken: int, max_retries: int, options: Any, response: Any
    ) -> None:
        remaining = max_retries - retries_taken
        headers = response.headers if response is not None else None
        timeout = self._calculate_retry_timeout(remaining, options, headers)
        await self._fake_clock.sleep(timeout)


def fault_sim(
    clock: FakeClock, seed: int, faults: dict[str, float], **overrides: object
) -> tuple[Starlette, httpx.AsyncClient, str]:
    """The simulator the fault benchmarks run against: unbounded slots, seeded faults.

    Returns the app (its ``state.engine`` counts the requests), an HTTP
    client wired to it in process, and the model name to ask for.
    """
    profile = get_profile(
        "default",
        slots=100_000,
        ttft_base_s=0.2,
        decode_tps=100.0,
        faults=faults,
        seed=seed,
        **overrides,
    )
    app = create_app(profile, clock=clock)
    http = httpx.AsyncClient(transport=StreamingASGITransport(app), base_url="http://sim")
    return app, http, profile.models[0]


async def sdk_client(clock: FakeClock, http: httpx.AsyncClient) -> FakeClockSDK:
    """The openai SDK with its default retries, sleeping on ``clock``."""
    sdk = FakeClockSDK(clock, base_url="http://sim/v1", api_key="x", http_client=http)
    await prepare_sdk(sdk)
    return sdk


async def agentrt_model(
    clock: FakeClock, http: httpx.AsyncClient, model: str, seed: int, *, throttle: bool
) -> RetryingModel:
    """The SDK with no retries of its own under the default flow layers."""
    backend = OpenAIModel(model=model, base_url="http://sim/v1", http_client=http, clock=clock)
    await backend.prepare()
    rng = random.Random(seed)  # one stream of draws for the throttle and the backoff
    inner: ChatModel = backend
    if throttle:
        inner = ThrottlingModel(inner, AdaptiveThrottle(), rng=rng, clock=clock)
    return RetryingModel(
        BreakerModel(inner, CircuitBreaker(), clock=clock),
        clock=clock,
        budget=LocalRetryBudget(RetryBudget()),
        rng=rng,
    )


async def _workload(
    clock: FakeClock, call: Callable[[int], Awaitable[None]], calls: int, rate: float
) -> list[float | None]:
    """Start call i at i / rate; return each call's success time (None: failed)."""
    ends: list[float | None] = [None] * calls

    async def one(i: int) -> None:
        try:
            await call(i)
        except Exception:
            return
        ends[i] = clock.now()

    t0 = clock.now()
    async with asyncio.TaskGroup() as tg:
        for i in range(calls):
            delay = t0 + i / rate - clock.now()
            if delay > 0:
                await clock.sleep(delay)
            tg.create_task(one(i))
    return [None if e is None else e - t0 for e in ends]


def _recovery(ends: list[float | None], window: tuple[float, float]) -> float:
    ok = sorted(e for e in ends if e is not None)

    def rate(a: float, b: float) -> float:
        return sum(1 for e in ok if a <= e < b) / (b - a)

    base = rate(SPAN_S, window[0])
    t = window[1]
    last = ok[-1] if ok else t
    while t + SPAN_S <= last:
        if rate(t, t + SPAN_S) >= 0.95 * base:
            return t - window[1]
        t += 0.5
    return float("inf")


async def _one_run(kind: str, opts: BrownoutOptions) -> _Run:
    start, end = opts.window_start_s, opts.window_end_s
    share = opts.failure_share
    clock = FakeClock()
    faults = {"error_503": share / 2, "overloaded_529": share / 2}
    app, http, name = fault_sim(clock, opts.seed, faults, fault_window=(start, end))
    max_tokens = opts.max_tokens
    if kind == "naive":
        sdk = await sdk_client(clock, http)

        async def call(i: int) -> None:
            for attempt in range(3):  # the framework's naive re-attempts
                try:
                    await sdk.chat.completions.create(
                        model=name,
                        messages=[{"role": "user", "content": f"call {i}"}],
                        max_tokens=max_tokens,
                    )
                    return
                except openai.APIError:
                    if attempt == 2:
                        raise
                    await clock.sleep(1.0)

    else:
        model = await agentrt_model(clock, http, name, opts.seed, throttle=True)

        async def call(i: int) -> None:
            await model.complete(ChatRequest.of(f"call {i}", max_tokens=max_tokens))

    calls = opts.calls
    async with clock.autojumping():
        ends = await _workload(clock, call, calls, opts.rate)
    await http.aclose()
    stats = app.state.engine.stats()
    ok = sum(1 for e in ends if e is not None)
    return _Run(
        attempts=int(stats["requests"]),
        succeeded=ok,
        failed=calls - ok,
        recovery_s=_recovery(ends, (start, end)),
        faults_injected=int(stats["faults_total"]),
    )


@benchmark(
    "brownout",
    "requests sent during a 50% 503/529 brownout: SDK+framework retries vs agentrt",
    BrownoutOptions,
)
async def run_brownout(opts: BrownoutOptions) -> BenchResult:
    wall0 = time.monotonic()
    naive = await _one_run("naive", opts)
    ours = await _one_run("agentrt", opts)
    calls = opts.calls
    figures: JsonObject = {
        "requests": calls,
        "attempts_naive": naive.attempts,
        "attempts_agentrt": ours.attempts,
        "recovery_s": ours.recovery_s,
        "recovery_s_naive": naive.recovery_s,
        "succeeded_naive": naive.succeeded,
        "succeeded_agentrt": ours.succeeded,
        "window_s": [opts.window_start_s, opts.window_end_s],
    }
    bound = 1.1 * calls + 3
    return BenchResult(
        "brownout",
        figures,
        ratios=(
            ("attempts per request, naive SDK+framework", naive.attempts / calls),
            ("attempts per request, agentrt", ours.attempts / calls),
        ),
        checks=(
            ("attempts_agentrt <= 1.1 x requests + 3", ours.attempts <= bound),
            ("agentrt throughput recovers (to >= 95%) after the window", ours.recovery_s < 60),
        ),
        notes=(
            f"{calls} calls at {opts.rate} calls/s (open loop), "
            f"{opts.failure_share:.0%} of answers 503/529 from "
            f"{opts.window_start_s} s to {opts.window_end_s} s, on a fake clock; "
            "attempts counted by the simulator",
            f"wall time {time.monotonic() - wall0:.0f} s",
        ),
    )
