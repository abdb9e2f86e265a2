"""The simulator's wire format and latency model, observed on a FakeClock."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest
from simkit import MODEL, SimFactory, body

from agentrt.sim import get_profile
from agentrt.tokens._counting import EstimateCounter, estimate_tokens

LONG = "x" * 4000  # 1000 tokens + 4 message overhead


async def test_non_streaming_answer_and_usage(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("default")) as sim:
        r = await sim.post(body(LONG, max_tokens=20))
        assert r.status_code == 200
        data = r.json()
        assert data["object"] == "chat.completion"
        text = data["choices"][0]["message"]["content"]
        assert estimate_tokens(text) == 20
        assert data["choices"][0]["finish_reason"] == "stop"
        usage = data["usage"]
        assert usage["prompt_tokens"] == EstimateCounter().count_messages([LONG]) == 1004
        assert usage["completion_tokens"] == 20
        assert usage["total_tokens"] == 1024
        assert usage["prompt_tokens_details"]["cached_tokens"] == 0
        # the whole answer arrives after TTFT + 19 more tokens at 50 tok/s
        assert sim.clock.now() == pytest.approx(0.2 + 1004 * 0.05e-3 + 19 / 50)
        assert float(r.headers["x-sim-ttft-s"]) == pytest.approx(0.2502)


async def test_streaming_ttft_is_exact_and_decode_follows_rate(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("default")) as sim:
        log = await sim.stream(body(LONG, max_tokens=30, stream=True))
    assert log.status == 200
    assert log.headers["content-type"].startswith("text/event-stream")
    first = log.chunks[0]
    assert first["object"] == "chat.completion.chunk"
    assert first["choices"][0]["delta"]["role"] == "assistant"
    times = log.content_times()
    assert times[0] == pytest.approx(0.2 + 1004 * 0.05e-3, abs=1e-9)
    assert times[-1] - times[0] == pytest.approx(29 / 50)
    assert estimate_tokens(log.text) == 30
    assert log.done
    assert log.usage == {
        "prompt_tokens": 1004,
        "completion_tokens": 30,
        "total_tokens": 1034,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }
    finals = [c for c in log.chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    assert finals[0]["choices"][0]["finish_reason"] == "stop"
    # with include_usage every chunk but the last carries usage: null
    assert all("usage" in c for c in log.chunks)
    assert log.chunks[-1]["choices"] == []


async def test_stream_without_include_usage_has_no_usage_chunk(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("fast")) as sim:
        log = await sim.stream(body(max_tokens=5, stream=True, usage=False))
    assert log.done and log.usage is None
    assert all("usage" not in c for c in log.chunks)


async def test_stream_overhead_slows_streaming_decode(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("default", stream_overhead=0.25)) as sim:
        log = await sim.stream(body(max_tokens=21, stream=True))
    times = log.content_times()
    assert times[-1] - times[0] == pytest.approx(20 / 40)


async def test_high_rates_coalesce_tokens_into_fewer_events(make_sim: SimFactory) -> None:
    prof = get_profile("fast", min_event_interval_s=0.01)  # 2000 tok/s: 20 tokens per event
    async with make_sim(prof) as sim:
        log = await sim.stream(body(max_tokens=201, stream=True))
    times = log.content_times()
    assert len(times) == 1 + 200 // 20
    assert times[-1] - times[0] == pytest.approx(200 / 2000)
    assert estimate_tokens(log.text) == 201


async def test_requests_beyond_slots_queue_fifo(make_sim: SimFactory) -> None:
    prof = get_profile("default", slots=2, prefill_s_per_token=0.0)
    async with make_sim(prof) as sim:

        async def one(i: int) -> tuple[int, float, float]:
            r = await sim.post(body(f"req {i}", max_tokens=11))
            return i, sim.clock.now(), float(r.headers["x-sim-queue-s"])

        results = await asyncio.gather(*(one(i) for i in range(4)))
        stats = sim.engine.stats()
    service = 0.2 + 10 / 50
    done = sorted(t for _, t, _ in results)
    assert done[:2] == pytest.approx([service] * 2)
    assert done[2:] == pytest.approx([2 * service] * 2)
    assert sorted(q for _, _, q in results) == pytest.approx([0, 0, service, service])
    assert stats["peak_active"] == 2 and stats["peak_queued"] == 2
    assert stats["completed"] == 4 and stats["active"] == 0


async def test_aggregate_tps_is_shared_between_streams(make_sim: SimFactory) -> None:
    prof = get_profile("default", aggregate_tps=50.0, prefill_s_per_token=0.0)
    async with make_sim(prof) as sim:
        logs = await asyncio.gather(
            *(sim.stream(body(max_tokens=11, stream=True)) for _ in range(2))
        )
    for log in logs:
        times = log.content_times()
        assert times[0] == pytest.approx(0.2)
        assert times[-1] - times[0] == pytest.approx(10 / 25)  # 50 tok/s split two ways


async def test_knee_profile_throughput_flattens_then_drops(make_sim: SimFactory) -> None:
    async def throughput(n: int) -> float:
        async with make_sim(get_profile("knee")) as sim:
            await asyncio.gather(*(sim.post(body(max_tokens=60)) for _ in range(n)))
            return n * 60 / sim.clock.now()

    low, mid, high = await throughput(4), await throughput(12), await throughput(32)
    assert mid > 1.5 * low
    assert high < 0.8 * mid


async def test_client_hangup_cancels_the_request_and_frees_its_slot(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("default")) as sim:
        async with sim.client.stream(
            "POST", "/v1/chat/completions", json=body(max_tokens=500, stream=True)
        ) as r:
            async for _ in r.aiter_bytes():
                break
        await asyncio.sleep(0)
        stats = sim.engine.stats()
    assert stats["active"] == 0 and stats["cancelled"] == 1 and stats["completed"] == 0


async def test_unknown_model_is_404_model_not_found(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("fast")) as sim:
        r = await sim.post({**body(), "model": "gpt-9"})
    assert r.status_code == 404
    err = r.json()["error"]
    assert err["code"] == "model_not_found" and err["type"] == "invalid_request_error"
    assert "gpt-9" in err["message"]


async def test_bad_requests_are_400(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("fast")) as sim:
        r1 = await sim.client.post("/v1/chat/completions", content=b"{not json")
        r2 = await sim.post({"model": MODEL, "messages": []})
        r3 = await sim.post(body(max_tokens=0))
    assert [r.status_code for r in (r1, r2, r3)] == [400, 400, 400]
    assert all(r.json()["error"]["type"] == "invalid_request_error" for r in (r1, r2, r3))


async def test_models_and_stats_endpoints(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("fast", models=("a", "b"))) as sim:
        models = (await sim.client.get("/v1/models")).json()
        stats = (await sim.client.get("/sim/stats")).json()
    assert models["object"] == "list"
    assert [m["id"] for m in models["data"]] == ["a", "b"]
    assert stats["profile"] == "fast" and stats["requests"] == 0


async def test_json_schema_answer_is_valid_json(make_sim: SimFactory) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
    async with make_sim(get_profile("fast")) as sim:
        r = await sim.post(body(response_format=fmt))
    assert "n" in json.loads(r.json()["choices"][0]["message"]["content"])


async def test_openai_sdk_streams_with_usage(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("default")) as sim:
        client = openai.AsyncOpenAI(
            base_url="http://sim/v1", api_key="x", http_client=sim.client, max_retries=0
        )
        t0 = sim.clock.now()
        first: float | None = None
        pieces: list[str] = []
        usage = None
        stream = await client.chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "count to ten"}],
            max_tokens=12,
            stream=True,
            stream_options={"include_usage": True},
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                first = first if first is not None else sim.clock.now() - t0
                pieces.append(chunk.choices[0].delta.content)
            if chunk.usage:
                usage = chunk.usage
        plain = await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], max_tokens=3
        )
    assert first == pytest.approx(0.2 + 7 * 0.05e-3)
    assert estimate_tokens("".join(pieces)) == 12
    assert usage is not None and usage.completion_tokens == 12 and usage.prompt_tokens == 7
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 0
    assert plain.usage is not None and plain.usage.completion_tokens == 3


async def test_openai_sdk_sees_errors_as_its_exceptions(make_sim: SimFactory) -> None:
    async with make_sim(get_profile("fast")) as sim:
        client = openai.AsyncOpenAI(
            base_url="http://sim/v1", api_key="x", http_client=sim.client, max_retries=0
        )
        with pytest.raises(openai.NotFoundError) as exc:
            await client.chat.completions.create(
                model="nope", messages=[{"role": "user", "content": "hi"}]
            )
    assert exc.value.code == "model_not_found"
