import pytest

from agentrt.metrics import CallRecord
from agentrt.tokens import LatencyModel, calibrate, estimate_tokens, make_plan
from agentrt.tokens._counting import EstimateCounter, ExactCounter


def test_estimate_is_four_bytes_per_token_rounded_up():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("é" * 2) == 1  # UTF-8 bytes, not characters
    assert EstimateCounter().count_messages(["abcd", ""]) == 1 + 4 + 0 + 4


def test_exact_counter_uses_the_tokenizer():
    c = ExactCounter(lambda s: list(range(len(s.split()))))
    assert c.exact and c.count("a b c") == 3 and c.count("") == 0


def test_call_time_is_ttft_plus_output_over_rate():
    m = LatencyModel(ttft_base_s=0.5, prefill_s_per_token=0.05e-3, decode_tps=50)
    assert m.ttft(2000) == pytest.approx(0.6)
    assert m.call_s(2000, 100) == pytest.approx(2.6)


def test_fanout_respects_slots_and_shared_capacity():
    m = LatencyModel(0.0, 0.0, 50)
    assert m.fanout(1600, 16).seconds == pytest.approx(2.0)
    two_waves = m.fanout(1600, 16, slots=8)
    assert two_waves.waves == 2 and two_waves.seconds == pytest.approx(4.0)
    shared = m.fanout(1600, 16, aggregate_tps=400)
    assert shared.per_stream_tps == 25 and shared.seconds == pytest.approx(4.0)


def test_plan_reproduces_the_articles_example():
    p = make_plan(output_tokens=30000, tps=50, parallel=16)
    assert p.single_s == pytest.approx(600.5)
    assert 37 <= p.fanout.seconds <= 41
    assert any("full rate" in a for a in p.assumptions)
    with pytest.raises(ValueError):
        make_plan(output_tokens=10, tps=50, parallel=0)


def _rec(inp: int, ttft: float, tps: float) -> CallRecord:
    return CallRecord("s", "model", "m", 0.0, 1.0, ttft_s=ttft, input_tokens=inp, decode_tps=tps)


def test_calibrate_recovers_base_prefill_and_rate():
    truth = LatencyModel(0.2, 0.1e-3, 40)
    recs = [_rec(n, truth.ttft(n), tps) for n, tps in [(0, 39), (1000, 40), (3000, 41), (5000, 40)]]
    fit = calibrate(recs)
    assert fit.ttft_base_s == pytest.approx(0.2)
    assert fit.prefill_s_per_token == pytest.approx(0.1e-3)
    assert fit.decode_tps == 40
    assert calibrate([]) == LatencyModel()
