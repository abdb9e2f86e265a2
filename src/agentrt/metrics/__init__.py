"""Per-call records, per-stage aggregates, JSON export."""

from agentrt.metrics.record import CallKind, CallRecord, Outcome
from agentrt.metrics.table import calls_table, stages_table
from agentrt.metrics.recorder import (
    MetricsRecorder,
    StageStats,
    current_recorder,
    current_stage,
    percentile,
    stage,
    summarize,
)

__all__ = [
    "CallKind",
    "CallRecord",
    "MetricsRecorder",
    "Outcome",
    "StageStats",
    "current_recorder",
    "current_stage",
    "calls_table",
    "percentile",
    "stage",
    "stages_table",
    "summarize",
]
