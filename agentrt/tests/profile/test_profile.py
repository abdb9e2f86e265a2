"""The what-if profiler on recorded runs."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentrt._clock import FakeClock
from agentrt._errors import UserError
from agentrt.llm import ChatRequest, FakeModel
from agentrt.metrics import CallRecord, MetricsRecorder, stage
from agentrt.profile import WhatIf, breakdown, estimates, load_run, profile_json
from agentrt.tokens import LatencyModel


def _run(tmp_path: Path) -> Path:
    """A synthetic run: a planning call, 8 map calls one after another, an
    I/O-bound retrieval, a retried judgment."""
    r = MetricsRecorder()
    r.origin = 0.0
    add = r.add
    add(
        CallRecord(
            "plan",
            "model",
            "m",
            0.0,
            2.0,
            ttft_s=0.5,
            input_tokens=3000,
            output_tokens=75,
            decode_tps=50,
            streamed=True,
        )
    )
    for i in range(8):
        add(
            CallRecord(
                "map",
                "model",
                "m",
                2.0 + 3.0 * i,
                3.0,
                ttft_s=0.6,
                input_tokens=6500,
                output_tokens=120,
                decode_tps=50,
                streamed=True,
            )
        )
    add(CallRecord("retrieve", "tool", "grep", 26.0, 4.0))
    add(CallRecord("retrieve", "model", "m", 30.0, 0.05, input_tokens=100, output_tokens=2))
    add(
        CallRecord(
            "judge",
            "model",
            "m",
            30.05,
            4.0,
            queue_wait_s=0.5,
            input_tokens=2000,
            output_tokens=150,
            decode_tps=50,
            attempts=2,
        )
    )
    for _ in range(2):  # two identical tiny streamed calls
        add(
            CallRecord(
                "tiny",
                "model",
                "m",
                34.05,
                0.04,
                ttft_s=0.01,
                input_tokens=50,
                output_tokens=2,
                streamed=True,
            )
        )
    path = tmp_path / "run.json"
    r.write_json(path)
    return path


def test_breakdown_splits_time_and_names_the_dominant_stage(tmp_path: Path) -> None:
    bd = breakdown(load_run(_run(tmp_path)))
    assert bd.dominant is not None and bd.dominant.stage == "map"
    m = {s.stage: s for s in bd.stages}
    assert m["map"].prefill_s == pytest.approx(8 * 0.6)
    assert m["map"].decode_s == pytest.approx(8 * 2.4)
    assert m["map"].chained and m["map"].concurrency == pytest.approx(1.0)
    judge = m["judge"]
    assert judge.queue_s == pytest.approx(0.5)
    assert judge.retry_s == pytest.approx(1.75)  # half of the 3.5 s past the queue
    assert judge.prefill_s == pytest.approx(bd.latency.ttft(2000))  # from the latency model
    assert m["retrieve"].tool_s == pytest.approx(4.0)
    assert bd.latency_fitted


def test_estimates_say_when_parallelism_will_not_help(tmp_path: Path) -> None:
    bd = breakdown(load_run(_run(tmp_path)))
    ests = {(e.stage, e.change): e for e in estimates(bd, WhatIf(parallel=8))}
    par = ests[("map", "parallelism x8")]
    assert par.estimate_s == pytest.approx(3.0) and par.helps
    assert "dependent steps" in par.note
    assert any("independent" in a for a in par.assumptions)
    assert "I/O-bound" in ests[("retrieve", "parallelism x8")].note
    assert "one model call" in ests[("judge", "parallelism x8")].note
    assert "under 100 ms" in ests[("tiny", "parallelism x8")].note
    assert ests[("judge", "streaming on")].estimate_s == pytest.approx(bd.latency.ttft(2000))
    smaller = ests[("map", "smaller model")]
    assert smaller.estimate_s == pytest.approx(24.0 - 24.0 * (2 / 3))
    prefix = ests[("map", "prefix caching")]
    assert prefix.estimate_s is not None and prefix.estimate_s < 24.0
    doc = profile_json(bd, list(ests.values()))
    assert doc["dominant_stage"] == "map"
    json.dumps(doc)


def test_prefix_estimate_uses_the_latency_model(tmp_path: Path) -> None:
    bd = breakdown(load_run(_run(tmp_path)), LatencyModel(0.1, 1e-4, 50.0))
    (e,) = [e for e in estimates(bd) if e.stage == "map" and e.change == "prefix caching"]
    # 52,000 input tokens, 80% cached, 0.1 ms/token: 4.16 s less prefill
    assert e.estimate_s == pytest.approx(24.0 - 4.16)


async def test_profiles_a_run_recorded_by_the_runtime(tmp_path: Path) -> None:
    clock = FakeClock()
    rec = MetricsRecorder(clock)
    model = FakeModel(clock=clock, latency=LatencyModel(0.2, 1e-4, 40.0), recorder=rec)
    async with clock.autojumping():
        with rec.activate():
            with stage("map"):
                await asyncio.gather(
                    *(model.stream_text(ChatRequest.of("x" * 400, max_tokens=40)) for _ in range(4))
                )
            with stage("judge"):
                await model.complete(ChatRequest.of("y" * 4000, max_tokens=200))
    path = tmp_path / "run.json"
    rec.write_json(path)
    bd = breakdown(load_run(path))
    assert [s.stage for s in bd.stages] == ["map", "judge"]
    assert bd.dominant is not None and bd.dominant.stage == "judge"
    assert {s.stage: s for s in bd.stages}["map"].concurrency > 3.5


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read run file"),
        ("{", "is not JSON"),
        ('{"x": 1}', "no 'calls' list"),
        ('{"calls": [{"bogus": 1}]}', "malformed call record"),
    ],
)
def test_bad_run_files_are_one_line_user_errors(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "run.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UserError, match=message):
        load_run(path)


def test_cli_prints_the_profile_and_writes_json(tmp_path: Path) -> None:
    run = _run(tmp_path)
    out = tmp_path / "profile.json"
    cmd = [sys.executable, "-m", "agentrt", "profile", str(run), "--json", str(out)]
    done = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=60,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert "dominant stage: map" in done.stdout
    assert "will not help" in done.stdout and "assumes" in done.stdout
    assert json.loads(out.read_text())["dominant_stage"] == "map"
    bad = subprocess.run(
        [sys.executable, "-m", "agentrt", "profile", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_a_run_that_measured_no_ttft_is_not_given_default_findings(tmp_path: Path) -> None:
    """Non-streamed calls only: prefill, decode and the decode rate are unknown, said so."""
    r = MetricsRecorder()
    r.origin = 0.0
    for i in range(4):
        r.add(CallRecord("map", "model", "m", float(i), 2.0, input_tokens=500, output_tokens=60))
    path = tmp_path / "nottft.json"
    r.write_json(path)
    bd = breakdown(load_run(path))
    (s,) = bd.stages
    assert not bd.latency_fitted and not bd.decode_measured
    assert s.prefill_s == 0 and s.decode_s == 0 and s.unsplit_s == pytest.approx(8.0)
    data = profile_json(bd, estimates(bd))
    assert data["latency_model"]["decode_tps"] is None
    assert data["latency_model"]["ttft_base_s"] is None
    unknown = {e["change"] for e in data["estimates"] if e["unknown"]}
    assert unknown == {"streaming on", "prefix caching"}
    p = subprocess.run(
        [sys.executable, "-m", "agentrt", "profile", str(path)],
        capture_output=True,
        text=True,
        env={"COLUMNS": "200", "PATH": ""},
    )
    assert p.returncode == 0, p.stderr
    assert "not measured" in p.stdout and "tok/s" not in p.stdout
