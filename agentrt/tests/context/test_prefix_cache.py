"""The simulator's prefix cache: LRU of chained blocks, and cached tokens cost no prefill."""

from __future__ import annotations

import asyncio

from agentrt._clock import FakeClock
from agentrt.context import PromptLayout, prefix_use
from agentrt.llm import ChatRequest
from agentrt.metrics import MetricsRecorder
from agentrt.sim import get_profile, in_process_model
from agentrt.sim._prefix_cache import PrefixCache

SHARED = [("system", "s" * 400), ("user", "u" * 4000)]


def test_lookup_matches_only_a_whole_leading_prefix() -> None:
    cache = PrefixCache(capacity_tokens=10_000, block_tokens=16)
    assert cache.lookup(SHARED, 1104) == 0  # nothing inserted yet
    cache.insert(SHARED)
    # same prompt: every full block (4400 bytes -> 68 blocks of 64 bytes)
    assert cache.lookup(SHARED, 1104) == 68 * 16
    # a different first message shares nothing, even though the rest is equal
    assert cache.lookup([("system", "t" * 400), SHARED[1]], 1104) == 0
    # a prompt that extends the cached one gets the cached part
    assert cache.lookup([*SHARED, ("user", "more" * 100)], 1300) == 68 * 16


def test_lru_capacity_evicts_least_recently_used_prefixes() -> None:
    cache = PrefixCache(capacity_tokens=16 * 70, block_tokens=16)  # room for one prompt
    other = [("system", "x" * 400), ("user", "y" * 4000)]
    cache.insert(SHARED)
    cache.insert(other)
    assert cache.size_tokens <= 16 * 70
    assert cache.lookup(other, 1104) == 68 * 16
    assert cache.lookup(SHARED, 1104) < 16 * 4  # mostly evicted


async def test_stable_scatter_is_served_from_cache_and_prefills_faster() -> None:
    clock = FakeClock()
    prof = get_profile("default", prefix_cache_tokens=65536, prefill_lanes=1, ttft_base_s=0.1)
    layout = PromptLayout.of("You debug.", [("Bug report", "r" * 8000), ("Evidence", "e" * 8000)])
    rec = MetricsRecorder(clock)
    async with clock.autojumping(), in_process_model(prof, clock=clock, recorder=rec) as model:
        first = await model.complete(layout.request("chunk 0", max_tokens=4))
        rest = await asyncio.gather(
            *(model.complete(layout.request(f"chunk {i}", max_tokens=4)) for i in range(1, 5))
        )
    assert first.usage.cached_tokens == 0
    assert all(r.usage.cached_tokens >= layout.shared_tokens - 32 for r in rest)
    use = prefix_use(rec.records)
    assert use.cached_share > 0.7
    assert use.effective_prefill_tokens == use.input_tokens - use.cached_tokens
    # cached calls skip ~4000 tokens of prefill at 0.05 ms/token: 0.2 s each
    assert first.timing.wall_s - rest[0].timing.wall_s > 0.15


async def test_one_prefill_lane_serializes_prefills() -> None:
    clock = FakeClock()
    prof = get_profile("default", prefill_lanes=1, ttft_base_s=0.0, prefill_s_per_token=1e-3)
    async with clock.autojumping(), in_process_model(prof, clock=clock) as model:
        t0 = clock.now()
        await asyncio.gather(
            *(model.complete(ChatRequest.of("x" * 384, max_tokens=1)) for _ in range(3))
        )
        elapsed = clock.now() - t0
    # 100 tokens each (96 + 4 framing): three prefills of 0.1 s one after another
    assert elapsed >= 0.3 - 1e-9
