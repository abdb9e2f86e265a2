"""The shared client behaviour, exercised through the shipped FakeModel."""

import asyncio

import pytest

from agentrt._clock import FakeClock
from agentrt._errors import ProviderError, StructuredOutputError
from agentrt.flow import ConcurrencyLimitedModel, RetryingModel
from agentrt.llm import ChatRequest, Completed, FakeModel, TextDelta, provider_error
from agentrt.llm._client import check_structured
from agentrt.metrics import MetricsRecorder, stage
from agentrt.tokens import LatencyModel

LAT = LatencyModel(ttft_base_s=0.5, prefill_s_per_token=0.001, decode_tps=50)


def _req(max_tokens: int = 101, **kw) -> ChatRequest:
    return ChatRequest.of("x" * 396, max_tokens=max_tokens, **kw)  # 99 tokens + 4 framing


async def test_complete_reports_usage_and_timing_on_the_fake_clock():
    clock = FakeClock()
    rec = MetricsRecorder(clock)
    model = FakeModel(latency=LAT, clock=clock, recorder=rec)
    async with clock.autojumping():
        res = await model.complete(_req(stage="map"))
    assert res.usage.input_tokens == 103 and res.usage.output_tokens == 101
    assert res.timing.ttft_s == pytest.approx(0.5 + 0.103)
    # the fake knows its TTFT, so its decode rate is known; the output rate includes TTFT
    assert res.timing.decode_tps == pytest.approx(50)
    assert res.timing.output_tps == pytest.approx(101 / (0.603 + 100 / 50))
    assert res.timing.wall_s == pytest.approx(0.603 + 100 / 50)
    (r,) = rec.records
    assert (r.stage, r.kind, r.output_tokens, r.streamed) == ("map", "model", 101, False)


async def test_stream_yields_deltas_then_the_result():
    clock = FakeClock()
    model = FakeModel(latency=LAT, clock=clock)
    rec = MetricsRecorder(clock)
    texts: list[str] = []
    final = None
    async with clock.autojumping():
        with rec.activate(), stage("judge"):
            async for ev in model.stream(_req()):
                if isinstance(ev, TextDelta):
                    texts.append(ev.text)
                else:
                    assert isinstance(ev, Completed)
                    final = ev.result
    assert final is not None and "".join(texts) == final.text
    assert final.timing.ttft_s == pytest.approx(0.603)
    assert final.timing.decode_tps == pytest.approx(50)
    assert rec.records[0].stage == "judge" and rec.records[0].streamed


async def test_the_declared_limit_is_held_once_by_the_flow_layer_and_reported_as_wait():
    # one concurrency layer: the bare client does not limit, the flow layer
    # over it holds the endpoint's declared max_concurrency
    clock = FakeClock()
    bare = FakeModel(latency=LAT, clock=clock, max_concurrency=1)
    async with clock.autojumping():
        await asyncio.gather(bare.complete(_req()), bare.complete(_req()))
    assert bare.max_in_flight == 2

    rec = MetricsRecorder(clock)
    inner = FakeModel(latency=LAT, clock=clock, max_concurrency=1)
    limited = ConcurrencyLimitedModel(inner)
    model = RetryingModel(limited, clock=clock, recorder=rec)
    assert limited.limiter.algorithm.limit == 1
    async with clock.autojumping():
        await asyncio.gather(model.complete(_req()), model.complete(_req()))
    assert inner.max_in_flight == 1
    first, second = sorted(rec.records, key=lambda r: r.queue_wait_s)
    assert first.queue_wait_s == 0
    # the second call waited exactly as long as the first one ran
    assert second.queue_wait_s == pytest.approx(first.wall_s)
    assert second.wall_s == pytest.approx(2 * first.wall_s)


async def test_failures_are_recorded_and_raised_without_retrying():
    clock = FakeClock()
    rec = MetricsRecorder(clock)
    model = FakeModel(latency=LAT, clock=clock, recorder=rec, failures=[provider_error(503)])
    async with clock.autojumping():
        with pytest.raises(ProviderError) as ei:
            await model.complete(_req())
        ok = await model.complete(_req())
    assert ei.value.status == 503 and ei.value.retryable
    assert len(model.requests) == 2  # one request per call: the client never retries
    assert [r.outcome for r in rec.records] == ["error", "ok"]
    assert ok.text


async def test_structured_output_is_parsed_and_checked():
    schema = {
        "type": "object",
        "properties": {"file": {"type": "string"}, "score": {"type": "number"}},
        "required": ["file", "score"],
    }
    model = FakeModel()
    res = await model.complete(_req(json_schema=schema))
    assert set(res.parsed) == {"file", "score"}
    bad = FakeModel(responder=lambda _: "not json at all")
    with pytest.raises(StructuredOutputError, match="not the requested JSON"):
        await bad.complete(_req(json_schema=schema))
    with pytest.raises(StructuredOutputError, match="required field"):
        check_structured('{"file": "a.py"}', schema, "m")
    with pytest.raises(StructuredOutputError, match="not the requested object"):
        check_structured("[1]", schema, "m")


async def test_cancelled_call_is_recorded_as_cancelled():
    clock = FakeClock()
    rec = MetricsRecorder(clock)
    model = FakeModel(latency=LAT, clock=clock, recorder=rec)
    task = asyncio.create_task(model.complete(_req()))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert rec.records[0].outcome == "cancelled"


def test_quota_exhaustion_is_not_retryable_but_rate_limits_are():
    assert ProviderError("x", status=429).retryable
    assert not ProviderError("x", status=429, code="insufficient_quota").retryable
    assert not ProviderError("x", status=400).retryable
    assert ProviderError("x", status=529).retryable
    assert ProviderError("x", status=None).retryable
