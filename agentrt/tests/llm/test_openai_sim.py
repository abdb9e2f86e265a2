"""The OpenAI backend against the in-process simulator, on a fake clock."""

import asyncio

import pytest

from agentrt._clock import FakeClock
from agentrt._errors import ProviderError, StructuredOutputError, UnknownModel
from agentrt.llm import ChatRequest, Completed, TextDelta
from agentrt.metrics import MetricsRecorder, stage
from agentrt.sim import get_profile, in_process_model
from agentrt.tokens import EstimateCounter

PROFILE = get_profile("default")  # 0.2 s + 0.05 ms/token TTFT, 50 tok/s, 16 slots


def _req(**kw) -> ChatRequest:
    return ChatRequest.of("q" * 3984, **kw)  # 996 estimated tokens + 4 framing


def _ttft(req: ChatRequest) -> float:
    n = EstimateCounter().count_messages(m.content for m in req.messages)
    return PROFILE.ttft_base_s + n * PROFILE.prefill_s_per_token


async def test_streaming_metrics_match_the_profile_exactly():
    clock = FakeClock()
    rec = MetricsRecorder(clock)
    req = _req(max_tokens=100)
    async with clock.autojumping(), in_process_model(PROFILE, clock=clock, recorder=rec) as m:
        deltas, final = [], None
        with stage("judge"):
            async for ev in m.stream(req):
                if isinstance(ev, TextDelta):
                    deltas.append(ev.text)
                elif isinstance(ev, Completed):
                    final = ev.result
    assert final is not None and "".join(deltas) == final.text
    assert final.usage.input_tokens == 1000 and final.usage.output_tokens == 100
    assert final.timing.ttft_s == pytest.approx(_ttft(req), abs=1e-6)
    assert final.timing.decode_tps == pytest.approx(PROFILE.decode_tps, rel=0.02)
    (r,) = rec.records
    assert r.stage == "judge" and r.streamed and r.ttft_s == final.timing.ttft_s


async def test_non_streaming_call_reports_usage_and_wall():
    clock = FakeClock()
    req = _req(max_tokens=50)
    async with clock.autojumping(), in_process_model(PROFILE, clock=clock) as m:
        res = await m.complete(req)
    assert res.usage.output_tokens == 50
    assert res.timing.ttft_s is None  # not observable without streaming
    assert res.timing.wall_s == pytest.approx(_ttft(req) + 49 / 50, rel=0.02)


async def test_fanout_beats_one_big_call_by_the_latency_model():
    clock = FakeClock()
    async with clock.autojumping(), in_process_model(PROFILE, clock=clock) as m:
        t0 = clock.now()
        await m.complete(ChatRequest.of("x", max_tokens=1600))
        single = clock.now() - t0
        t0 = clock.now()
        await asyncio.gather(*(m.complete(ChatRequest.of("x", max_tokens=100)) for _ in range(16)))
        fanout = clock.now() - t0
    assert single / fanout > 10


async def test_structured_output_and_malformed_json():
    schema = {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]}
    clock = FakeClock()
    async with clock.autojumping(), in_process_model("fast", clock=clock) as m:
        res = await m.complete(ChatRequest.of("x", json_schema=schema))
        assert isinstance(res.parsed["k"], str)
    bad = get_profile("fast", faults={"malformed_json": 1.0})
    async with clock.autojumping(), in_process_model(bad, clock=clock) as m:
        with pytest.raises(StructuredOutputError, match="not the requested JSON"):
            await m.complete(ChatRequest.of("x", json_schema=schema))


@pytest.mark.parametrize(
    ("fault", "status", "retryable"),
    [("error_503", 503, True), ("overloaded_529", 529, True), ("quota_exhausted", 429, False)],
)
async def test_provider_faults_surface_as_provider_errors(fault, status, retryable):
    clock = FakeClock()
    prof = get_profile("fast", faults={fault: 1.0})
    async with clock.autojumping(), in_process_model(prof, clock=clock) as m:
        with pytest.raises(ProviderError) as ei:
            await m.complete(ChatRequest.of("x"))
    assert ei.value.status == status and ei.value.retryable is retryable


async def test_cut_stream_is_an_error_not_a_short_answer():
    clock = FakeClock()
    prof = get_profile("fast", faults={"stream_cut": 1.0})
    rec = MetricsRecorder(clock)
    async with clock.autojumping(), in_process_model(prof, clock=clock, recorder=rec) as m:
        with pytest.raises(ProviderError):
            await m.stream_text(ChatRequest.of("x", max_tokens=50))
    assert rec.records[0].outcome == "error"


async def test_rate_limit_429_carries_retry_after():
    clock = FakeClock()
    prof = get_profile("fast", rpm=1)
    async with clock.autojumping(), in_process_model(prof, clock=clock) as m:
        await m.complete(ChatRequest.of("x"))
        with pytest.raises(ProviderError) as ei:
            await m.complete(ChatRequest.of("x"))
    assert ei.value.status == 429 and ei.value.retry_after and ei.value.retry_after > 0
    assert any(k.startswith("x-ratelimit-") for k in ei.value.headers)


async def test_unknown_model_is_a_clear_error():
    clock = FakeClock()
    async with clock.autojumping(), in_process_model("fast", clock=clock, model="gpt-9") as m:
        with pytest.raises(UnknownModel, match="does not serve model 'gpt-9'"):
            await m.complete(ChatRequest.of("x"))
