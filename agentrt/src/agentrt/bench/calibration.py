"""`calibration`: do the client's metrics measure what the simulator is set to?

Streams calls of several input sizes at a real simulator server (below its
slot limit, so nothing queues), fits the latency model to the client's own
records, and puts the measured TTFT and decode rate beside the profile's
configured values. If the metrics are honest, the two agree.
"""

from __future__ import annotations

import asyncio
import statistics
from dataclasses import dataclass

from agentrt._clock import ScaledClock
from agentrt._json import JsonObject
from agentrt.bench.harness import BenchResult, benchmark
from agentrt.bench.simproc import running_simulator
from agentrt.llm._openai_backend import OpenAIModel
from agentrt.llm._types import ChatRequest
from agentrt.metrics._recorder import MetricsRecorder, stage
from agentrt.sim import get_profile
from agentrt.tokens._counting import estimate_tokens
from agentrt.tokens._latency import calibrate

__all__ = ["CalibrationOptions", "run_calibration"]


def _prompt(tokens: int, salt: int) -> str:
    # ~4 bytes per estimated token; the salt keeps prompts distinct
    body = f"call {salt}: " + "abc " * tokens
    while estimate_tokens(body) > tokens:
        body = body[:-4]
    return body


@dataclass(frozen=True, slots=True)
class CalibrationOptions:
    profile: str = "default"  # the simulator profile
    time_scale: float = 1.0
    output_tokens: int = 150
    rounds: int = 3


@benchmark(
    "calibration",
    "client-measured TTFT and decode rate vs the simulator profile's configured values",
    CalibrationOptions,
)
async def run_calibration(opts: CalibrationOptions) -> BenchResult:
    profile = get_profile(opts.profile)
    scale = opts.time_scale
    out_tokens = opts.output_tokens
    # Inputs large enough that TTFT (0.3-1 s) dwarfs the fixed cost of a
    # loopback HTTP round trip on a busy machine; the fitted base shows that cost.
    sizes = [2000, 4000, 8000, 16000]
    concurrency = max(1, min(len(sizes), profile.slots // 2))
    clock = ScaledClock(scale)  # measures in the simulator's (model) seconds
    recorder = MetricsRecorder(clock)
    async with running_simulator(profile.name, time_scale=scale) as base_url:
        client = OpenAIModel(
            model=profile.models[0],
            base_url=base_url,
            clock=clock,
            recorder=recorder,
            max_concurrency=concurrency,
        )
        try:
            reqs = [
                ChatRequest.of(_prompt(n, r * 100 + i), max_tokens=out_tokens)
                for r in range(opts.rounds)
                for i, n in enumerate(sizes)
            ]
            # warm-up: the first request pays connection set-up
            await client.stream_text(ChatRequest.of("warm up", max_tokens=2))
            # at most `concurrency` in flight: the bare client declares its
            # limit but does not hold it (the flow layer does, and is not here)
            slots = asyncio.Semaphore(concurrency)

            async def one(request: ChatRequest) -> None:
                async with slots:
                    await client.stream_text(request)

            with recorder.activate(), stage("calibration"):
                await asyncio.gather(*(one(r) for r in reqs))
        finally:
            await client.aclose()
    records = [r for r in recorder.records if r.stage == "calibration"]
    fitted = calibrate(records)
    # TTFT is linear in input, so the mean of the configured TTFTs is the
    # configured TTFT at the mean input size
    ttfts = [r.ttft_s for r in records if r.ttft_s is not None]
    ref_in = statistics.fmean(r.input_tokens for r in records)
    configured_ttft = profile.ttft_base_s + ref_in * profile.prefill_s_per_token
    measured_ttft = statistics.fmean(ttfts)
    configured_tps = profile.decode_tps
    measured_tps = fitted.decode_tps
    ttft_ratio = measured_ttft / configured_ttft
    tps_ratio = measured_tps / configured_tps
    figures: JsonObject = {
        "profile": profile.name,
        "time_scale": scale,
        "calls": len(records),
        "mean_input_tokens": round(ref_in, 1),
        "configured_ttft_s": round(configured_ttft, 4),
        "measured_ttft_s": round(measured_ttft, 4),
        "configured_tps": configured_tps,
        "measured_tps": round(measured_tps, 2),
        "configured_ttft_base_s": profile.ttft_base_s,
        "fitted_ttft_base_s": round(fitted.ttft_base_s, 4),
        "configured_prefill_ms_per_token": profile.prefill_s_per_token * 1000,
        "fitted_prefill_ms_per_token": round(fitted.prefill_s_per_token * 1000, 5),
    }
    return BenchResult(
        name="calibration",
        figures=figures,
        ratios=(("measured/configured TTFT", ttft_ratio), ("measured/configured tok/s", tps_ratio)),
        checks=(
            ("TTFT within 10%", abs(ttft_ratio - 1) <= 0.10),
            ("decode rate within 10%", abs(tps_ratio - 1) <= 0.10),
        ),
        notes=(
            f"{len(records)} streamed calls over loopback HTTP, inputs {sizes} tokens, "
            f"{out_tokens} output tokens each, {concurrency} at a time (below the "
            f"{profile.slots} slots, so nothing queues)",
        ),
    )
