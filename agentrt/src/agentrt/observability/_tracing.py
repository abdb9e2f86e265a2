"""OpenTelemetry spans from a run's records, with GenAI semantic conventions.

A run's call records already hold every timing (start on the run's
timeline, wall, TTFT, tokens), so spans are built from them after the fact
with explicit start and end times: no tracing code sits on the hot path,
and a run recorded on a fake clock traces exactly like a live one. The
tree is run → stage → call; model calls are ``chat {model}`` spans with
``gen_ai.*`` attributes, tool calls ``execute_tool {name}`` spans.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer

from agentrt._errors import ConfigError
from agentrt.metrics._record import CallRecord

__all__ = ["ExporterKind", "TracingConfig", "call_attributes", "emit_run_spans", "tracer_provider"]

ExporterKind = Literal["none", "console", "otlp"]
_NS = 1_000_000_000


@dataclass(frozen=True, slots=True)
class TracingConfig:
    """``exporter``: none, console (stdout) or otlp (HTTP, to ``endpoint``)."""

    exporter: ExporterKind = "none"
    endpoint: str | None = None  # OTLP/HTTP traces URL; None: the SDK's env default
    service_name: str = "agentrt"


def tracer_provider(
    config: TracingConfig, *, exporter: SpanExporter | None = None
) -> TracerProvider:
    """A provider exporting as configured (``exporter`` overrides, for tests)."""
    provider = TracerProvider(resource=Resource.create({"service.name": config.service_name}))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    elif config.exporter == "console":
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter()))
    elif config.exporter == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise ConfigError(
                "the OTLP exporter needs opentelemetry-exporter-otlp-proto-http; "
                "pip install 'fixbugs[otlp]'"
            ) from None
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=config.endpoint)))
    elif config.exporter != "none":
        raise ConfigError(f"unknown trace exporter {config.exporter!r}; use none, console or otlp")
    return provider


SpanAttribute = str | bool | int | float  # the scalar attribute values OpenTelemetry takes


def call_attributes(r: CallRecord) -> dict[str, SpanAttribute]:
    """The span attributes of one call (GenAI semantic conventions + agentrt's own)."""
    attrs: dict[str, SpanAttribute] = {
        "agentrt.stage": r.stage,
        "agentrt.call.kind": r.kind,
        "agentrt.call.attempts": r.attempts,
        "agentrt.call.outcome": r.outcome,
        "agentrt.call.queue_wait_s": r.queue_wait_s,
    }
    if r.kind == "model":
        attrs |= {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": r.name,
            "gen_ai.response.model": r.name,
            "gen_ai.usage.input_tokens": r.input_tokens,
            "gen_ai.usage.output_tokens": r.output_tokens,
        }
        if r.cached_tokens:
            attrs["gen_ai.usage.cache_read.input_tokens"] = r.cached_tokens
        if r.ttft_s is not None:
            attrs["gen_ai.server.time_to_first_token"] = r.ttft_s
        if r.decode_tps is not None:
            attrs["agentrt.call.decode_tps"] = r.decode_tps
        if r.output_tps is not None:
            attrs["agentrt.call.output_tps"] = r.output_tps
        attrs["agentrt.call.streamed"] = r.streamed
    else:
        attrs |= {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": r.name}
    if r.error:
        attrs["error.type"] = r.error.split(":", 1)[0]
    return attrs


def _span_name(r: CallRecord) -> str:
    return f"chat {r.name}" if r.kind == "model" else f"execute_tool {r.name}"


def emit_run_spans(
    tracer: Tracer,
    records: Sequence[CallRecord],
    *,
    run_name: str,
    stage_walls: Mapping[str, tuple[float, float]] | None = None,
    start_epoch_s: float | None = None,
    attributes: Mapping[str, SpanAttribute] | None = None,
) -> int:
    """Emit a run span, one span per stage and one per call; returns the span count.

    ``stage_walls`` maps a stage to its (start, end) on the run's timeline;
    stages without one span their calls. ``start_epoch_s`` places the
    timeline's zero in wall-clock time (default: so that the run ends now).
    """
    walls: dict[str, tuple[float, float]] = dict(stage_walls or {})
    for r in records:
        if r.stage not in walls:
            mine = [c for c in records if c.stage == r.stage]
            walls[r.stage] = (min(c.started_at for c in mine), max(c.ended_at for c in mine))
    end = max([e for _, e in walls.values()], default=0.0)
    begin = min([s for s, _ in walls.values()], default=0.0)
    zero = start_epoch_s if start_epoch_s is not None else time.time() - end

    def ns(t: float) -> int:
        return int((zero + t) * _NS)

    count = 0
    run = tracer.start_span(
        f"invoke_agent {run_name}",
        kind=SpanKind.INTERNAL,
        start_time=ns(min(0.0, begin)),
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": run_name,
            **(attributes or {}),
        },
    )
    run_ctx = trace.set_span_in_context(run)
    for name, (s, e) in sorted(walls.items(), key=lambda kv: kv[1]):
        stage_span: Span = tracer.start_span(
            f"stage {name}", context=run_ctx, start_time=ns(s), attributes={"agentrt.stage": name}
        )
        ctx = trace.set_span_in_context(stage_span)
        for r in (c for c in records if c.stage == name):
            span = tracer.start_span(
                _span_name(r),
                context=ctx,
                kind=SpanKind.CLIENT if r.kind == "model" else SpanKind.INTERNAL,
                start_time=ns(r.started_at),
                attributes=call_attributes(r),
            )
            if r.outcome == "error":
                span.set_status(Status(StatusCode.ERROR, r.error or "error"))
            span.end(end_time=ns(r.ended_at))
            count += 1
        stage_span.end(end_time=ns(max(e, s)))
        count += 1
    run.end(end_time=ns(end))
    return count + 1
