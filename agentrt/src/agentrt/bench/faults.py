"""`faults`: does the retry layer tell a steady error rate from a brownout?

100 calls, 16 in flight (a closed loop: a call starts when one ends),
against the in-process simulator on one :class:`~agentrt._clock.FakeClock`,
under two fault mixes, each served to two stacks:

* steady: 20% of answers fail, half 429 with ``Retry-After``, half 503.
  Retrying them all is right: a peer stack finishes every call;
* brownout: 50% of answers are 503. Retrying them all doubles the load on
  a provider that is already failing; the budget should hold back.

The stacks:

* sdk: the official ``openai`` SDK with its default retries (2 retries,
  exponential backoff, ``Retry-After`` honoured; only its sleep is moved
  onto the fake clock);
* agentrt: the SDK with ``max_retries=0`` inside the
  :class:`~agentrt.flow.RetryingModel` stack that ``client_for_role`` builds
  (the default retry policy and budget, a circuit breaker).

Requests are counted by the simulator itself. Each mix runs once per seed
(``seeds`` seeds from ``seed``): failed calls are summed over the seeds,
requests per call are over all the seeds' calls (one seed's 100 calls
vary by about +-0.06 requests per call from the draw of faults alone).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass

from agentrt._clock import FakeClock
from agentrt._json import JsonObject
from agentrt.bench.brownout import agentrt_model, fault_sim, sdk_client
from agentrt.bench.harness import BenchResult, benchmark
from agentrt.graph._scatter import gather_map
from agentrt.llm._types import ChatRequest

__all__ = ["FaultsOptions", "run_faults"]

STEADY = {"error_503": 0.1, "rate_limited_429": 0.1}
BROWNOUT = {"error_503": 0.5}


@dataclass(frozen=True, slots=True)
class FaultsOptions:
    calls: int = 100
    in_flight: int = 16
    max_tokens: int = 16
    retry_after_s: float = 1.0
    seed: int = 7  # the first seed
    seeds: int = 5  # how many seeds each mix runs with


@dataclass(frozen=True, slots=True)
class _Run:
    requests: int  # counted by the simulator
    failed: int
    requests_per_call: float
    sim_s: float


async def _one_run(stack: str, faults: dict[str, float], seed: int, opts: FaultsOptions) -> _Run:
    clock = FakeClock()
    app, http, name = fault_sim(clock, seed, {**faults, "retry_after_s": opts.retry_after_s})
    max_tokens = opts.max_tokens
    call: Callable[[int], Awaitable[object]]
    if stack == "sdk":
        sdk = await sdk_client(clock, http)

        async def call(i: int) -> object:
            return await sdk.chat.completions.create(
                model=name,
                messages=[{"role": "user", "content": f"call {i}"}],
                max_tokens=max_tokens,
            )

    else:
        # what client_for_role builds: the default policy and budget, a breaker
        model = await agentrt_model(clock, http, name, seed, throttle=False)

        async def call(i: int) -> object:
            return await model.complete(ChatRequest.of(f"call {i}", max_tokens=max_tokens))

    calls = opts.calls
    async with clock.autojumping():
        outcomes = await gather_map(call, range(calls), limit=opts.in_flight)
    await http.aclose()
    stats = app.state.engine.stats()
    failed = sum(1 for o in outcomes if not o.ok)
    return _Run(
        requests=int(stats["requests"]),
        failed=failed,
        requests_per_call=int(stats["requests"]) / calls,
        sim_s=clock.now(),
    )


async def _mix(stack: str, faults: dict[str, float], opts: FaultsOptions) -> list[_Run]:
    return [await _one_run(stack, faults, seed, opts) for seed in _seeds(opts)]


def _seeds(opts: FaultsOptions) -> list[int]:
    return [opts.seed + k for k in range(opts.seeds)]


def _failed(runs: Sequence[_Run]) -> int:
    return sum(r.failed for r in runs)


def _per_call(runs: Sequence[_Run], calls: int) -> float:
    """Requests per call over every seed's calls together."""
    return round(sum(r.requests for r in runs) / (calls * len(runs)), 4)


@benchmark(
    "faults",
    "steady 20% 429/503 vs a 50% 503 brownout, 100 calls at 16 in flight: SDK defaults vs agentrt",
    FaultsOptions,
)
async def run_faults(opts: FaultsOptions) -> BenchResult:
    wall0 = time.monotonic()
    ours_steady = await _mix("agentrt", STEADY, opts)
    ours_brown = await _mix("agentrt", BROWNOUT, opts)
    sdk_steady = await _mix("sdk", STEADY, opts)
    sdk_brown = await _mix("sdk", BROWNOUT, opts)
    n = opts.calls
    steady_failed = _failed(ours_steady)
    steady_per_call = _per_call(ours_steady, n)
    brownout_per_request = _per_call(ours_brown, n)
    sdk_steady_per_call = _per_call(sdk_steady, n)
    sdk_brownout_per_request = _per_call(sdk_brown, n)
    figures: JsonObject = {
        "calls": n,
        "in_flight": opts.in_flight,
        "seeds": _seeds(opts),
        # the headline figures, agentrt: failed calls summed over the seeds,
        # requests per call over all the seeds' calls
        "steady_failed": steady_failed,
        "steady_requests_per_call": steady_per_call,
        "brownout_attempts_per_request": brownout_per_request,
        "brownout_failed": _failed(ours_brown),
        # the same for the SDK's defaults
        "sdk_steady_failed": _failed(sdk_steady),
        "sdk_steady_requests_per_call": sdk_steady_per_call,
        "sdk_brownout_attempts_per_request": sdk_brownout_per_request,
        "sdk_brownout_failed": _failed(sdk_brown),
        # every seed
        "per_seed": {
            "agentrt_steady": [asdict(r) for r in ours_steady],
            "agentrt_brownout": [asdict(r) for r in ours_brown],
            "sdk_steady": [asdict(r) for r in sdk_steady],
            "sdk_brownout": [asdict(r) for r in sdk_brown],
        },
    }
    return BenchResult(
        "faults",
        figures,
        ratios=(
            ("steady requests per call, agentrt", steady_per_call),
            ("steady requests per call, SDK defaults", sdk_steady_per_call),
            ("brownout attempts per request, agentrt", brownout_per_request),
            ("brownout attempts per request, SDK defaults", sdk_brownout_per_request),
        ),
        checks=(
            ("steady: 0 failed calls", steady_failed == 0),
            ("steady: <= 1.35 requests per call", steady_per_call <= 1.35),
            ("brownout: attempts <= 1.1 x requests", brownout_per_request <= 1.1),
        ),
        notes=(
            f"{opts.calls} calls, {opts.in_flight} in flight, on a fake clock; steady = "
            f"10% 429 (Retry-After {opts.retry_after_s:g} s) + 10% 503, brownout = "
            "50% 503, for the whole run; requests counted by the simulator; failed calls "
            f"summed and requests per call pooled over {opts.seeds} seeds",
            f"wall time {time.monotonic() - wall0:.0f} s",
        ),
    )
