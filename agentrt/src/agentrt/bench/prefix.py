"""`prefix`: a scatter whose calls share a long prefix, laid out naively vs prefix-stable.

16 calls each review one chunk against the same ~6,000 tokens of shared
context (system prompt, bug report, evidence so far). Naively each call's
system prompt names its chunk and the chunk comes before the shared
context, so no two prompts share a prefix; prefix-stable
(:class:`~agentrt.context.PromptLayout`), the shared context comes first
and byte-identical, the chunk last. Both run against one real simulator
server with prefix caching on and one prefill lane (prefills queue, as an
engine's per-step token budget makes them), in the same run.
"""

from __future__ import annotations

import asyncio
import statistics
from dataclasses import dataclass

from agentrt._clock import ScaledClock
from agentrt._json import JsonObject
from agentrt.bench.harness import BenchResult, benchmark
from agentrt.bench.simproc import running_simulator
from agentrt.context._layout import PromptLayout, prefix_use
from agentrt.llm._openai_backend import OpenAIModel
from agentrt.llm._types import ChatRequest, Message
from agentrt.metrics._recorder import MetricsRecorder, percentile, stage
from agentrt.sim import get_profile
from agentrt.tokens._counting import estimate_tokens

__all__ = ["PrefixOptions", "run_prefix"]

_SYSTEM = (
    "You are a debugging agent. You read one chunk of a repository at a time and report "
    "only facts that bear on the bug below, as short bullet points citing line numbers."
)


def _text(tokens: int, word: str) -> str:
    """Distinct-looking filler of about ``tokens`` estimated tokens."""
    out: list[str] = []
    i = 0
    while estimate_tokens("".join(out)) < tokens:
        out.append(f"{word} {i}: value={i * 7919 % 10007} state=ok\n")
        i += 1
    return "".join(out)


def _workload(prefix_tokens: int, chunk_tokens: int, chunks: int) -> tuple[PromptLayout, list[str]]:
    report_tokens = prefix_tokens // 4
    evidence_tokens = prefix_tokens - report_tokens - estimate_tokens(_SYSTEM) - 16
    layout = PromptLayout.of(
        _SYSTEM,
        [
            ("Bug report", _text(report_tokens, "report")),
            ("Evidence so far", _text(evidence_tokens, "evidence")),
        ],
    )
    parts = [_text(chunk_tokens, f"chunk{c}-line") for c in range(chunks)]
    return layout, parts


def _naive(layout: PromptLayout, i: int, n: int, chunk: str) -> ChatRequest:
    """What a prompt looks like when nobody thinks about the cache."""
    system = f"You are reviewing chunk {i + 1} of {n}. {layout.system}"
    user = f"## Chunk {i + 1}\n{chunk}\n\n{layout.shared_text}Report the facts."
    return ChatRequest(messages=(Message("system", system), Message("user", user)), max_tokens=16)


async def _scatter(client: OpenAIModel, reqs: list[ChatRequest]) -> None:
    async with asyncio.TaskGroup() as tg:
        for r in reqs:
            tg.create_task(client.stream_text(r))


@dataclass(frozen=True, slots=True)
class PrefixOptions:
    prefix_tokens: int = 6000  # shared by every chunk's prompt
    chunk_tokens: int = 400
    chunks: int = 16
    cache_tokens: int = 65536  # the simulator's prefix cache
    time_scale: float = 2.0


@benchmark(
    "prefix",
    "scatter of 16 chunks sharing a 6,000-token prefix: naive vs prefix-stable prompts",
    PrefixOptions,
)
async def run_prefix(opts: PrefixOptions) -> BenchResult:
    layout, parts = _workload(opts.prefix_tokens, opts.chunk_tokens, opts.chunks)
    n = len(parts)
    naive = [_naive(layout, i, n, c) for i, c in enumerate(parts)]
    stable = [
        layout.request(f"## Chunk {i + 1}\n{c}\nReport the facts.", max_tokens=16)
        for i, c in enumerate(parts)
    ]
    overrides = {
        "prefix_cache_tokens": opts.cache_tokens,
        "prefill_lanes": 1,
        "slots": max(16, n),
    }
    profile = get_profile("default", **overrides)
    scale = opts.time_scale
    clock = ScaledClock(scale)
    recorder = MetricsRecorder(clock)
    async with running_simulator("default", time_scale=scale, overrides=overrides) as base_url:
        client = OpenAIModel(
            model=profile.models[0], base_url=base_url, clock=clock, recorder=recorder
        )
        try:
            await client.stream_text(ChatRequest.of("warm up the connection", max_tokens=2))
            with recorder.activate():
                with stage("naive"):
                    await _scatter(client, naive)
                with stage("stable"):
                    await _scatter(client, stable)
        finally:
            await client.aclose()
    by = {s: [r for r in recorder.records if r.stage == s] for s in ("naive", "stable")}
    ttft = {s: [r.ttft_s for r in rs if r.ttft_s is not None] for s, rs in by.items()}
    use = {s: prefix_use(rs) for s, rs in by.items()}
    mean = {s: statistics.fmean(v) for s, v in ttft.items()}
    figures: JsonObject = {
        "chunks": n,
        "shared_prefix_tokens": layout.shared_tokens,
        "ttft_naive_s": round(mean["naive"], 4),
        "ttft_stable_s": round(mean["stable"], 4),
        "ttft_naive_p95_s": round(percentile(ttft["naive"], 95) or 0.0, 4),
        "ttft_stable_p95_s": round(percentile(ttft["stable"], 95) or 0.0, 4),
        "cached_share": round(use["stable"].cached_share, 4),
        "cached_share_naive": round(use["naive"].cached_share, 4),
        "input_tokens_stable": use["stable"].input_tokens,
        "effective_prefill_tokens_naive": use["naive"].effective_prefill_tokens,
        "effective_prefill_tokens_stable": use["stable"].effective_prefill_tokens,
    }
    ratio = mean["stable"] / mean["naive"]
    return BenchResult(
        name="prefix",
        figures=figures,
        ratios=(("stable/naive mean TTFT", ratio),),
        checks=(
            ("ttft_stable_s <= 0.5 x ttft_naive_s", ratio <= 0.5),
            ("cached_share >= 0.8", use["stable"].cached_share >= 0.8),
        ),
        notes=(
            f"simulator profile 'default' with prefix_cache_tokens={opts.cache_tokens}, "
            f"prefill_lanes=1, time scale {scale:g}; {n} streamed calls per layout, all sent "
            "at once; TTFT per call as the client measured it, cached tokens as the usage reported",
        ),
    )
