"""Staged pipelines on durable queues.

Stages with their own worker pools, concurrency and models, joined by
bounded queues (:mod:`agentrt.queues`); per-item, per-stage records; fair
ordering between jobs; per-key serialization; session-capacity admission.
"""

from agentrt.pipeline._loading import load_pipeline
from agentrt.pipeline._runner import PipelineRunner
from agentrt.pipeline._sessions import (
    Session,
    SessionBudget,
    SessionGate,
    SessionReport,
    SessionStats,
)
from agentrt.pipeline._stage import Pipeline, Stage, StageContext, StageFn

__all__ = [
    "Pipeline",
    "PipelineRunner",
    "Session",
    "SessionBudget",
    "SessionGate",
    "SessionReport",
    "SessionStats",
    "Stage",
    "StageContext",
    "StageFn",
    "load_pipeline",
]
