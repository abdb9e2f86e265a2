"""Per-call records, per-stage aggregates, JSON export."""

from agentrt.metrics.record import CallKind, CallRecord, Outcome
from agentrt.metrics.recorder import (
    MetricsRecorder,
    StageStats,
    current_recorder,
    current_stage,
    percentile,
    stage,
    summarize,
)
from agentrt.metrics.table import calls_table, stages_table

__all__ = [
    "CallKind",
    "CallRecord",
    "MetricsRecorder",
    "Outcome",
    "StageStats",
    "calls_table",
    "current_recorder",
    "current_stage",
    "percentile",
    "stage",
    "stages_table",
    "summarize",
]
