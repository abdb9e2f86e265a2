"""Cheap context: prefix-stable prompts, session affinity, and parking idle sessions."""

from agentrt.context._affinity import (
    AffinityModel,
    AffinityRouter,
    Route,
    affinity_key,
    request_key,
)
from agentrt.context._layout import PrefixUse, PromptLayout, Section, prefix_use
from agentrt.context._park import (
    ParkedState,
    SessionParker,
    ToolWait,
    restore_sequence,
    save_sequence,
)
from agentrt.context._policy import Choice, CostMeter, CostModel, Decision, LinearCost, decide

__all__ = [
    "AffinityModel",
    "AffinityRouter",
    "Choice",
    "CostMeter",
    "CostModel",
    "Decision",
    "LinearCost",
    "ParkedState",
    "PrefixUse",
    "PromptLayout",
    "Route",
    "Section",
    "SessionParker",
    "ToolWait",
    "affinity_key",
    "decide",
    "prefix_use",
    "request_key",
    "restore_sequence",
    "save_sequence",
]
