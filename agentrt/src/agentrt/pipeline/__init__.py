"""Staged pipelines on durable queues.

Stages with their own worker pools, concurrency and models, joined by
bounded queues (:mod:`agentrt.queues`); per-item, per-stage records; fair
ordering between jobs; per-key serialization; session-capacity admission.
"""

from agentrt.pipeline.loading import load_pipeline
from agentrt.pipeline.runner import PipelineRunner
from agentrt.pipeline.sessions import (
    Session,
    SessionBudget,
    SessionGate,
    SessionReport,
    SessionStats,
)
from agentrt.pipeline.stage import Pipeline, Stage, StageContext, StageFn

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
