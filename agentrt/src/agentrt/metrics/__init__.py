"""Per-call records, per-stage aggregates, JSON export.

The rich tables are in :mod:`agentrt.metrics._table` (the ``cli`` extra).
"""

from agentrt.metrics._record import CallKind, CallRecord, Outcome
from agentrt.metrics._recorder import (
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
    "percentile",
    "stage",
    "summarize",
]
