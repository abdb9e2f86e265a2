"""Observability: OpenTelemetry spans and Prometheus metrics from a run's records.

Spans follow the OpenTelemetry GenAI semantic conventions (model, input and
output tokens, time to first token); metrics give per-stage latency
histograms and the live state of queues, limits and the retry budget.
"""

from agentrt.observability._flow import FlowState, LimitState, RetryBudgetState, flow_state
from agentrt.observability._prometheus import LiveState, RuntimeMetrics
from agentrt.observability._tracing import (
    ExporterKind,
    TracingConfig,
    call_attributes,
    emit_run_spans,
    tracer_provider,
)

__all__ = [
    "ExporterKind",
    "FlowState",
    "LimitState",
    "LiveState",
    "RetryBudgetState",
    "RuntimeMetrics",
    "TracingConfig",
    "call_attributes",
    "emit_run_spans",
    "flow_state",
    "tracer_provider",
]
