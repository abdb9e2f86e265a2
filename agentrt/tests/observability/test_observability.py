from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentrt._clock import FakeClock
from agentrt.cli import main as agentrt_main
from agentrt.flow import (
    ConcurrencyLimitedModel,
    ConcurrencyLimiter,
    LocalRetryBudget,
    RetryingModel,
    StaticLimit,
)
from agentrt.llm import FakeModel
from agentrt.metrics import CallRecord
from agentrt.observability import (
    LiveState,
    RuntimeMetrics,
    TracingConfig,
    emit_run_spans,
    flow_state,
    tracer_provider,
)
from agentrt.report import concurrency_profile, gantt, load_run_obj

CALLS = [
    CallRecord(
        "analysis",
        "model",
        "small",
        0.0,
        2.0,
        ttft_s=0.5,
        input_tokens=100,
        output_tokens=40,
        attempts=1,
    ),
    CallRecord(
        "analysis",
        "model",
        "small",
        1.0,
        2.0,
        ttft_s=0.7,
        input_tokens=80,
        output_tokens=20,
        attempts=3,
        outcome="error",
        error="ProviderError: 503",
    ),
    CallRecord("fix", "tool", "pytest", 4.0, 1.0),
]


def test_spans_form_run_stage_call_tree_with_genai_attributes() -> None:
    exporter = InMemorySpanExporter()
    provider = tracer_provider(TracingConfig(), exporter=exporter)
    n = emit_run_spans(
        provider.get_tracer("t"),
        CALLS,
        run_name="fixbugs",
        stage_walls={"analysis": (0.0, 3.5), "fix": (3.5, 5.0)},
        start_epoch_s=1000.0,
    )
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert n == 6 == len(exporter.get_finished_spans())  # run, 2 stages, 3 calls
    run, stage, tool = (
        spans["invoke_agent fixbugs"],
        spans["stage analysis"],
        spans["execute_tool pytest"],
    )
    chats = [s for s in exporter.get_finished_spans() if s.name == "chat small"]
    assert all(c.parent.span_id == stage.context.span_id for c in chats)
    assert stage.parent.span_id == run.context.span_id
    ok = next(c for c in chats if c.attributes["gen_ai.usage.output_tokens"] == 40)
    assert ok.attributes["gen_ai.request.model"] == "small"
    assert ok.attributes["gen_ai.operation.name"] == "chat"
    assert ok.attributes["gen_ai.usage.input_tokens"] == 100
    assert ok.start_time == 1000 * 10**9 and ok.end_time == 1002 * 10**9
    bad = next(c for c in chats if c.attributes["gen_ai.usage.output_tokens"] == 20)
    assert bad.status.status_code.name == "ERROR"
    assert bad.attributes["error.type"] == "ProviderError"
    assert bad.attributes["agentrt.call.attempts"] == 3
    assert tool.attributes["gen_ai.tool.name"] == "pytest"
    assert stage.end_time == int(1003.5 * 10**9)


def test_unknown_exporter_is_a_user_error() -> None:
    from agentrt._errors import ConfigError

    with pytest.raises(ConfigError, match="none, console or otlp"):
        tracer_provider(TracingConfig(exporter="zipkin"))  # type: ignore[arg-type]


def test_prometheus_histograms_and_live_gauges() -> None:
    clock = FakeClock()
    limited = RetryingModel(
        ConcurrencyLimitedModel(FakeModel(clock=clock), ConcurrencyLimiter(StaticLimit(7))),
        budget=LocalRetryBudget(),
        name="judge",
        clock=clock,
    )
    m = RuntimeMetrics(
        state=lambda: LiveState(
            {"investigate": 3}, {"investigate": 16}, 1, 2, flow_state([limited, limited])
        )
    )
    m.observe_run(CALLS, {"analysis": 3.5, "fix": 1.5})
    text = m.exposition()[0].decode()
    assert 'agentrt_stage_seconds_bucket{le="5.0",stage="analysis"} 1.0' in text
    assert 'agentrt_stage_seconds_bucket{le="2.5",stage="analysis"} 0.0' in text
    assert 'agentrt_calls_total{kind="model",outcome="error",stage="analysis"} 1.0' in text
    assert 'agentrt_retries_total{stage="analysis"} 2.0' in text
    assert 'agentrt_ttft_seconds_count{stage="analysis"} 2.0' in text
    assert 'agentrt_queue_depth{stage="investigate"} 3.0' in text
    assert 'agentrt_concurrency_limit{client="judge"} 7.0' in text
    assert text.count("agentrt_concurrency_limit{") == 1  # the same client listed once
    assert "agentrt_retry_budget_in_flight_cap 3.0" in text


def test_concurrency_profile_sweeps_in_flight_levels() -> None:
    pts = {p.level: p for p in concurrency_profile(CALLS)}
    # 0-1 one call, 1-2 two calls, 2-3 one call, 4-5 the tool call (no tokens)
    assert pts[2].seconds == pytest.approx(1.0) and pts[1].seconds == pytest.approx(3.0)
    assert pts[2].output_tps == pytest.approx(40 / 2 + 20 / 2)
    assert pts[1].calls_started == 2 and pts[2].calls_started == 1


def test_gantt_rows_follow_stage_events() -> None:
    run = load_run_obj(
        {
            "title": "t",
            "calls": [c.to_dict() for c in CALLS],
            "events": [
                {"kind": "stage_started", "stage": "analysis", "at_s": 0.0},
                {"kind": "stage_finished", "stage": "analysis", "at_s": 3.5},
            ],
        }
    )
    bars = gantt(run)
    assert [(b.row, b.kind) for b in bars] == [
        ("analysis", "stage"),
        ("analysis", "model"),
        ("analysis", "model"),
        ("fix", "stage"),
        ("fix", "tool"),
    ]
    assert (bars[0].start, bars[0].end) == (0.0, 3.5) and bars[2].failed


def test_agentrt_report_writes_png_and_html(tmp_path: Path) -> None:
    run = tmp_path / "run.json"
    run.write_text(json.dumps({"title": "demo", "calls": [c.to_dict() for c in CALLS]}))
    with pytest.raises(SystemExit) as e:
        agentrt_main(["report", str(run), "--out", str(tmp_path / "out")])
    assert e.value.code == 0
    for name in ("run-gantt.png", "run-concurrency.png"):
        assert (tmp_path / "out" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "out" / "run.html").read_text()
    assert page.count("data:image/png;base64,") == 2 and "demo" in page


def test_agentrt_report_on_a_file_without_calls_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    with pytest.raises(SystemExit) as e:
        agentrt_main(["report", str(bad)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "holds no call records" in err and "Traceback" not in err


def test_queue_figures_are_exported_per_stage_when_given() -> None:
    from agentrt.queues import QueueStats, StageStats

    stats = QueueStats((StageStats("fix", 3, 2, 1, 41.5), StageStats("test")))
    text = RuntimeMetrics(state=lambda: LiveState(queue=stats)).exposition()[0].decode()
    assert 'agentrt_queue_queued{stage="fix"} 3.0' in text
    assert 'agentrt_queue_in_flight{stage="fix"} 2.0' in text
    assert 'agentrt_queue_dead_letters{stage="fix"} 1.0' in text
    assert 'agentrt_queue_oldest_age_seconds{stage="fix"} 41.5' in text
    assert 'agentrt_queue_oldest_age_seconds{stage="test"} 0.0' in text  # empty: 0
    # without them (a LiveState of before), none of those families is written
    bare = RuntimeMetrics(state=LiveState).exposition()[0].decode()
    assert "agentrt_queue_queued" not in bare and "agentrt_queue_depth" in bare
