"""`streaming`: the same stage with and without streaming.

A user-facing node streams: its first token reaches the caller after TTFT.
An internal node runs non-streaming: the caller sees nothing until the whole
answer is in, so its effective TTFT is the call's wall time, and its
throughput is output tokens over that wall time. Both come from the
metrics' call records of graph nodes, measured in one run.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from agentrt._clock import ScaledClock
from agentrt.bench.harness import BenchResult, benchmark
from agentrt.bench.simproc import simulated_model
from agentrt.graph._events import NodeToken
from agentrt.graph._executor import Graph
from agentrt.llm._types import ChatRequest
from agentrt.metrics._recorder import MetricsRecorder

__all__ = ["StreamingOptions", "run_streaming"]


@dataclass(frozen=True, slots=True)
class StreamingOptions:
    calls: int = 8  # model nodes per mode, run concurrently
    output_tokens: int = 300  # per call
    time_scale: float = 2.0


@benchmark(
    "streaming",
    "one stage of model nodes run streaming vs non-streaming: TTFT and tokens/s",
    StreamingOptions,
)
async def run_streaming(opts: StreamingOptions) -> BenchResult:
    scale, n, out = opts.time_scale, opts.calls, opts.output_tokens
    clock = ScaledClock(scale)
    rec = MetricsRecorder(clock)
    tokens_seen: dict[str, float] = {}
    async with simulated_model(clock, time_scale=scale, recorder=rec) as client:
        for streamed in (True, False):
            g = Graph()
            for i in range(n):
                req = ChatRequest.of(f"answer {i} {streamed}", max_tokens=out)
                name = f"{'stream' if streamed else 'batch'}-{i}"
                g.model(name, client, _const(req), stream=streamed)
            async with g.running(clock=clock, recorder=rec) as run:
                async for ev in run.events():
                    if isinstance(ev, NodeToken):
                        tokens_seen.setdefault(ev.node, ev.at)
    s = [r for r in rec.records if r.stage.startswith("stream-")]
    b = [r for r in rec.records if r.stage.startswith("batch-")]
    ttft_stream = statistics.median(r.ttft_s or 0.0 for r in s)
    ttft_batch = statistics.median(r.wall_s for r in b)  # nothing arrives before the end
    tps_stream = statistics.median(r.decode_tps or 0.0 for r in s)
    tps_batch = statistics.median(r.output_tokens / r.wall_s for r in b)
    return BenchResult(
        name="streaming",
        figures={
            "calls": n,
            "output_tokens": out,
            "time_scale": scale,
            "ttft_stream_s": round(ttft_stream, 3),
            "ttft_batch_s": round(ttft_batch, 3),
            "tps_stream": round(tps_stream, 2),
            "tps_batch": round(tps_batch, 2),
            "stream_events_nodes": len(tokens_seen),
        },
        ratios=(
            ("batch/stream time to first token", ttft_batch / ttft_stream),
            ("stream/batch tokens per second", tps_stream / tps_batch),
        ),
        checks=(("every streaming node's tokens reached the event stream", len(tokens_seen) == n),),
        notes=(
            f"{n} concurrent graph nodes per mode, {out} output tokens each, default profile",
            "tps_stream: decode rate after the first token (call records); tps_batch: output "
            "tokens / wall time, the rate the caller receives them",
        ),
    )


def _const(req: ChatRequest) -> Callable[[Mapping[str, object]], ChatRequest]:
    def build(_: Mapping[str, object]) -> ChatRequest:
        return req

    return build
