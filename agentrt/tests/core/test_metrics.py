import json

import pytest

from agentrt._clock import FakeClock
from agentrt.metrics import CallRecord, MetricsRecorder, current_stage, percentile, stage


def test_percentile_interpolates():
    assert percentile([], 50) is None
    assert percentile([3.0], 95) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert percentile(list(map(float, range(101))), 95) == pytest.approx(95)


def test_stage_context_nests_and_restores():
    assert current_stage() == "default"
    with stage("a"):
        with stage("b"):
            assert current_stage() == "b"
        assert current_stage() == "a"
    assert current_stage() == "default"


def test_per_stage_aggregates_failures_retries_and_rate(tmp_path):
    r = MetricsRecorder(FakeClock())
    r.add(CallRecord("map", "model", "m", 0.0, 2.0, ttft_s=0.5, output_tokens=100, attempts=1))
    r.add(CallRecord("map", "model", "m", 1.0, 3.0, ttft_s=0.7, output_tokens=100, attempts=3))
    r.add(CallRecord("map", "model", "m", 1.0, 1.0, outcome="error", attempts=2))
    r.add(CallRecord("reduce", "model", "m", 4.0, 1.0, output_tokens=10))
    s = r.by_stage()
    assert list(s) == ["map", "reduce"]
    m = s["map"]
    assert m.calls == 3 and m.failures == 1
    assert m.failure_rate == pytest.approx(1 / 3)
    assert m.retry_rate == pytest.approx(3 / 3)  # 6 attempts for 3 calls
    assert m.span_s == 4.0 and m.throughput_tps == pytest.approx(50.0)
    assert (m.model_calls, m.model_attempts, m.tool_calls) == (3, 6, 0)
    assert m.ttft_p50_s == pytest.approx(0.6)
    path = tmp_path / "run.json"
    r.write_json(path, extra={"run": "x"})
    obj = json.loads(path.read_text())
    assert obj["run"] == "x" and obj["stages"]["map"]["calls"] == 3
    again = MetricsRecorder.from_json_obj(obj)
    assert again.records == r.records


async def test_tool_call_is_timed_on_the_injected_clock():
    clock = FakeClock()
    r = MetricsRecorder(clock)
    with stage("repro"), r.tool_call("pytest"):
        clock.advance(2.5)
    with pytest.raises(RuntimeError), r.tool_call("boom", stage_name="x"):
        raise RuntimeError("no")
    a, b = r.records
    assert (a.stage, a.kind, a.wall_s, a.outcome) == ("repro", "tool", 2.5, "ok")
    assert (b.stage, b.outcome) == ("x", "error") and "no" in (b.error or "")
