"""The client's metrics against the simulator's own record of each request.

Every figure a call record holds — attempts, start and end, TTFT, decode
rate, tokens — is checked against what the in-process simulator saw for
the same requests (``SimEngine.served``), the way the figures were checked
against an independent server's logs.
"""

from __future__ import annotations

import random

import pytest

from agentrt._clock import FakeClock
from agentrt.flow import LocalRetryBudget, RetryingModel
from agentrt.llm import ChatRequest
from agentrt.metrics import MetricsRecorder
from agentrt.sim import get_profile, in_process_model


async def test_call_records_match_the_simulators_record_of_each_request():
    clock = FakeClock()
    profile = get_profile(
        "default",
        ttft_base_s=0.3,
        decode_tps=40.0,
        faults={"error_503": 0.2, "overloaded_529": 0.1},
        seed=5,
    )
    rec = MetricsRecorder(clock)
    async with in_process_model(profile, clock=clock) as sim:
        model = RetryingModel(sim, clock=clock, budget=LocalRetryBudget(), rng=random.Random(5))
        async with clock.autojumping():
            with rec.activate():
                for i in range(24):  # one after another: the i-th call's requests are adjacent
                    req = ChatRequest.of(f"call {i} " + "word " * (20 * i), max_tokens=30 + i)
                    try:
                        if i % 2:
                            async for _ in model.stream(req):
                                pass
                        else:
                            await model.complete(req)
                    except Exception:
                        pass  # a call that failed after its retries is recorded too
        served = list(sim.engine.served)
    calls = rec.records
    assert len(calls) == 24
    # attempts: exactly the requests the server received
    assert sum(c.attempts for c in calls) == len(served)
    assert any(c.attempts > 1 for c in calls), "the faults made some calls retry"
    at = 0
    for c in calls:
        mine = served[at : at + c.attempts]
        at += c.attempts
        assert c.started_at == pytest.approx(mine[0].arrived_at, abs=1e-6)
        last = mine[-1]
        assert last.ended_at is not None
        assert c.ended_at == pytest.approx(last.ended_at, abs=1e-6)
        assert all(s.stream == c.streamed for s in mine)
        if c.outcome != "ok":
            assert last.status != 200
            continue
        assert last.status == 200
        assert c.output_tokens == last.output_tokens
        assert c.input_tokens == last.input_tokens
        wall_at_server = last.wall_s
        assert wall_at_server is not None
        assert c.output_tps == pytest.approx(c.output_tokens / wall_at_server, rel=1e-6)
        if c.streamed:
            assert c.ttft_s == pytest.approx(last.ttft_s, abs=1e-6)
            assert c.decode_tps == pytest.approx(last.decode_tps, rel=1e-6)
            assert c.decode_tps == pytest.approx(profile.decode_tps, rel=0.05)
        else:
            # not streamed: nothing on the client measured decoding
            assert c.decode_tps is None
            assert c.output_tps < profile.decode_tps  # TTFT is in it
    assert at == len(served)
    ok = [c for c in calls if c.outcome == "ok"]
    assert any(c.streamed for c in ok) and any(not c.streamed for c in ok)
