"""`scatter`: the file-relevance stage as one big call vs a fan-out.

50 files, 30,000 output tokens in all, 50 tokens/s per stream, 16 slots.
The fan-out packs whole files into (at most) 16 chunks with the code
chunker and gives each call an equal share of the output; the lower bound
is the latency model's time for that many calls on that capacity. Both run
against a real simulator server at time scale, in one run.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass

from agentrt._clock import ScaledClock
from agentrt.bench.harness import BenchResult, benchmark
from agentrt.bench.simproc import running_simulator
from agentrt.chunking._code import CodeChunk, chunk_code
from agentrt.graph._scatter import gather_map
from agentrt.llm._openai_backend import OpenAIModel
from agentrt.llm._types import ChatRequest
from agentrt.metrics._recorder import MetricsRecorder, stage
from agentrt.sim import get_profile
from agentrt.tokens._counting import MESSAGE_OVERHEAD_TOKENS
from agentrt.tokens._latency import LatencyModel

__all__ = ["ScatterOptions", "chunks_for_width", "run_scatter", "synthetic_repo"]

SYSTEM = "Say which of these files could cause the bug, and why."


def synthetic_repo(files: int, seed: int = 7) -> dict[str, str]:
    """Deterministic Python files of varied size (about 150-650 tokens each)."""
    rng = random.Random(seed)
    repo = {}
    for i in range(files):
        fns = []
        for j in range(rng.randint(2, 6)):
            body = "".join(
                f"    v{k} = compute_{k}(arg, {rng.randint(0, 999)})\n"
                for k in range(rng.randint(3, 9))
            )
            fns.append(f"def handler_{i}_{j}(arg):\n{body}    return v0\n")
        repo[f"pkg/mod_{i:02d}.py"] = "import os\n\n\n" + "\n\n".join(fns)
    return repo


def chunks_for_width(files: dict[str, str], width: int) -> list[CodeChunk]:
    """The smallest token budget that packs the files into at most ``width`` chunks."""
    lo, hi = 1, sum(c.tokens for c in chunk_code(files, 10**9))
    while lo < hi:
        mid = (lo + hi) // 2
        if len(chunk_code(files, mid)) <= width:
            hi = mid
        else:
            lo = mid + 1
    return chunk_code(files, lo)


@dataclass(frozen=True, slots=True)
class ScatterOptions:
    files: int = 50  # in the synthetic repository
    output_tokens: int = 30000  # in all, shared out between the chunks
    tps: float = 50.0  # the simulator's decode rate per stream
    slots: int = 16  # the simulator's, and the fan-out's width
    time_scale: float = 10.0


@benchmark(
    "scatter",
    "file relevance: one big call vs a 16-way fan-out, against the simulator",
    ScatterOptions,
)
async def run_scatter(opts: ScatterOptions) -> BenchResult:
    scale, slots = opts.time_scale, opts.slots
    total_out = opts.output_tokens
    profile = get_profile("default", decode_tps=opts.tps, slots=slots)
    repo = synthetic_repo(opts.files)
    chunks = chunks_for_width(repo, slots)
    share = total_out // len(chunks)
    clock = ScaledClock(scale)
    rec = MetricsRecorder(clock)
    # non-streaming: the client sees no token events, so the simulator may batch
    # them coarsely; fine batches add timer overshoot (~3% at 10 ms) to every call
    overrides = {"decode_tps": profile.decode_tps, "slots": slots, "min_event_interval_s": 0.05}
    async with running_simulator("default", time_scale=scale, overrides=overrides) as url:
        client = OpenAIModel(model=profile.models[0], base_url=url, clock=clock, recorder=rec)
        try:
            # warm-up: open the connections the fan-out will use
            warm = [ChatRequest.of(f"warm up {i}", max_tokens=2) for i in range(slots)]
            await gather_map(client.complete, warm, limit=slots, on_error="raise")

            async def judge(chunk: CodeChunk) -> int:
                req = ChatRequest.of(chunk.render(), system=SYSTEM, max_tokens=share)
                return (await client.complete(req)).usage.output_tokens

            with rec.activate():
                t0 = clock.now()
                with stage("fanout"):
                    outs = await gather_map(judge, chunks, limit=slots, on_error="raise")
                fanout_s = clock.now() - t0
                everything = "\n\n".join(c.render() for c in chunks)
                t0 = clock.now()
                with stage("single"):
                    big = await client.complete(
                        ChatRequest.of(everything, system=SYSTEM, max_tokens=total_out)
                    )
                single_s = clock.now() - t0
        finally:
            await client.aclose()
    fan_out_tokens = sum(o.unwrap() for o in outs)
    in_per_call = statistics.fmean(c.tokens for c in chunks) + 2 * MESSAGE_OVERHEAD_TOKENS
    model = LatencyModel(profile.ttft_base_s, profile.prefill_s_per_token, profile.decode_tps)
    ideal = model.fanout(
        fan_out_tokens, len(chunks), input_tokens_per_call=round(in_per_call), slots=slots
    )
    speedup = single_s / fanout_s
    return BenchResult(
        name="scatter",
        figures={
            "files": len(repo),
            "calls": len(chunks),
            "output_tokens_single": big.usage.output_tokens,
            "output_tokens_fanout": fan_out_tokens,
            "time_scale": scale,
            "single_call_s": round(single_s, 3),
            "fanout_s": round(fanout_s, 3),
            "ideal_s": round(ideal.seconds, 3),
        },
        ratios=(("single/fanout", speedup), ("fanout/ideal", fanout_s / ideal.seconds)),
        checks=(
            ("fanout_s ≤ 1.05 × ideal_s", fanout_s <= 1.05 * ideal.seconds),
            ("single_call_s / fanout_s ≥ 14", speedup >= 14),
        ),
        notes=(
            f"{len(repo)} files packed whole into {len(chunks)} chunks by chunk_code "
            f"(budget {max(c.tokens for c in chunks)} tokens); {share} output tokens per call",
            "non-streaming calls over loopback HTTP to `agentrt sim serve` (default profile, "
            "min_event_interval_s=0.05); seconds are simulator seconds (ScaledClock)",
        ),
    )
