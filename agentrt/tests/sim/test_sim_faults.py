"""Rate limits, injected faults and determinism, as a client sees them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import openai
import pytest
from simkit import SimFactory, body

from agentrt.sim import get_profile


def faulty(kind: str, **extra: Any) -> Any:
    return get_profile("fast", faults={kind: 1.0}, **extra)


async def test_rpm_limit_answers_429_with_retry_after(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("fast", rpm=2)) as sim:
        ok = [await sim.post(body()) for _ in range(2)]
        limited = await sim.post(body())
        await sim.clock.sleep(int(limited.headers["retry-after-ms"]) / 1000)
        again = await sim.post(body())
        stats = sim.engine.stats()
    assert [r.status_code for r in ok] == [200, 200]
    assert ok[0].headers["x-ratelimit-limit-requests"] == "2"
    assert ok[0].headers["x-ratelimit-remaining-requests"] == "1"
    assert ok[1].headers["x-ratelimit-remaining-requests"] == "0"
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert limited.json()["error"]["type"] == "requests"
    # one request refills every 30 s; the two calls took a few ms of that
    wait_ms = int(limited.headers["retry-after-ms"])
    assert 29_900 < wait_ms <= 30_000
    assert limited.headers["retry-after"] == "30"
    assert limited.headers["x-ratelimit-remaining-requests"] == "0"
    assert limited.headers["x-ratelimit-reset-requests"].endswith("s")
    assert again.status_code == 200
    assert stats["rejected"] == {"rate_limited": 1}


async def test_tpm_limit_reserves_input_plus_max_tokens(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("fast", tpm=1000)) as sim:
        first = await sim.post(body("hi", max_tokens=600))  # reserves 5 + 600
        second = await sim.post(body("hi", max_tokens=600))
        too_big = await sim.post(body("hi", max_tokens=2000))
    assert first.status_code == 200
    assert first.headers["x-ratelimit-limit-tokens"] == "1000"
    assert first.headers["x-ratelimit-remaining-tokens"] == "395"
    assert second.status_code == 429
    assert second.json()["error"]["type"] == "tokens"
    assert int(second.headers["retry-after-ms"]) > 0
    assert too_big.status_code == 429 and "retry-after" not in too_big.headers


@pytest.mark.parametrize(
    ("kind", "status", "code"),
    [
        ("error_500", 500, "internal_error"),
        ("error_503", 503, "service_unavailable"),
        ("overloaded_529", 529, "overloaded"),
        ("quota_exhausted", 429, "insufficient_quota"),
    ],
)
async def test_error_faults(make_sim: SimFactory, kind: str, status: int, code: str) -> None:
    async with make_sim(faulty(kind)) as sim:
        r = await sim.post(body())
        stats = sim.engine.stats()
    assert r.status_code == status
    assert r.json()["error"]["code"] == code
    assert stats["faults"] == {kind: 1}
    if kind == "overloaded_529":  # Anthropic's shape, readable as OpenAI's too
        assert r.json()["type"] == "error"
        assert r.json()["error"]["type"] == "overloaded_error"
    if kind == "quota_exhausted":
        assert "retry-after" not in r.headers


async def test_quota_exhausted_through_the_sdk(make_sim: SimFactory) -> None:
    async with make_sim(faulty("quota_exhausted")) as sim:
        client = openai.AsyncOpenAI(
            base_url="http://sim/v1", api_key="x", http_client=sim.client, max_retries=0
        )
        with pytest.raises(openai.RateLimitError) as exc:
            await client.chat.completions.create(
                model="sim-model", messages=[{"role": "user", "content": "hi"}]
            )
    assert exc.value.code == "insufficient_quota"


@pytest.mark.parametrize("stream", [False, True])
async def test_reset_drops_the_connection(make_sim: SimFactory, stream: bool) -> None:
    async with make_sim(faulty("reset")) as sim:
        with pytest.raises(httpx.RemoteProtocolError):
            if stream:
                await sim.stream(body(stream=True))
            else:
                await sim.post(body())
        await asyncio.sleep(0)
        stats = sim.engine.stats()
    assert stats["faults"] == {"reset": 1} and stats["active"] == 0


async def test_reset_through_the_sdk_is_a_connection_error(make_sim: SimFactory) -> None:
    async with make_sim(faulty("reset")) as sim:
        client = openai.AsyncOpenAI(
            base_url="http://sim/v1", api_key="x", http_client=sim.client, max_retries=0
        )
        with pytest.raises(openai.APIConnectionError):
            await client.chat.completions.create(
                model="sim-model", messages=[{"role": "user", "content": "hi"}]
            )


async def test_stream_cut_ends_without_done_or_usage(make_sim: SimFactory) -> None:
    async with make_sim(faulty("stream_cut", seed=3)) as sim:
        log = await sim.stream(body(max_tokens=50, stream=True))
    assert log.status == 200
    assert 1 <= len(log.content_times()) < 50
    assert not log.done and log.usage is None


async def test_stream_cut_on_a_non_streaming_call_is_a_reset(make_sim: SimFactory) -> None:
    async with make_sim(faulty("stream_cut")) as sim:
        with pytest.raises(httpx.RemoteProtocolError):
            await sim.post(body())


async def test_stall_delays_the_first_token(make_sim: SimFactory) -> None:
    prof = get_profile("default", faults={"stall": 1.0, "stall_s": 45.0}, prefill_s_per_token=0.0)
    async with make_sim(prof) as sim:
        log = await sim.stream(body(max_tokens=3, stream=True))
    assert log.content_times()[0] == pytest.approx(45.2)
    assert log.done


async def test_malformed_json_only_when_json_was_requested(make_sim: SimFactory) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    async with make_sim(faulty("malformed_json")) as sim:
        bad = await sim.post(body(response_format=fmt))
        plain = await sim.post(body(max_tokens=4))
        stats = sim.engine.stats()
    with pytest.raises(json.JSONDecodeError):
        json.loads(bad.json()["choices"][0]["message"]["content"])
    assert plain.status_code == 200 and plain.json()["usage"]["completion_tokens"] == 4
    assert stats["faults"] == {"malformed_json": 1}


async def test_faults_apply_only_inside_the_window(make_sim: SimFactory) -> None:
    async with make_sim(faulty("error_500", fault_window=(10.0, 20.0))) as sim:
        before = await sim.post(body())
        await sim.clock.sleep(10.0 - sim.clock.now())
        during = await sim.post(body())
        await sim.clock.sleep(20.0 - sim.clock.now())
        after = await sim.post(body())
    assert [before.status_code, during.status_code, after.status_code] == [200, 500, 200]


async def test_full_queue_answers_529(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("fast", slots=1, max_queue=1)) as sim:
        rs = await asyncio.gather(*(sim.post(body(f"q{i}")) for i in range(3)))
        stats = sim.engine.stats()
    assert sorted(r.status_code for r in rs) == [200, 200, 529]
    assert stats["rejected"] == {"queue_full": 1}


async def _run_sequence(make_sim: SimFactory, seed: int) -> list[tuple[int, str]]:
    prof = get_profile("fast", seed=seed, faults={"error_500": 0.3, "error_503": 0.2})
    out: list[tuple[int, str]] = []
    async with make_sim(prof) as sim:
        for i in range(30):
            r = await sim.post(body(f"question {i % 3}", max_tokens=5))
            text = r.json()["choices"][0]["message"]["content"] if r.status_code == 200 else ""
            out.append((r.status_code, text))
    return out


async def test_same_seed_same_outcomes(make_sim: SimFactory) -> None:
    a = await _run_sequence(make_sim, 7)
    b = await _run_sequence(make_sim, 7)
    c = await _run_sequence(make_sim, 8)
    assert a == b
    assert {s for s, _ in a} == {200, 500, 503}
    assert a != c
