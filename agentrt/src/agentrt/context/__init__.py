"""Cheap context: prefix-stable prompts, session affinity, and parking idle sessions."""

from agentrt.context.affinity import AffinityModel, AffinityRouter, Route, affinity_key, request_key
from agentrt.context.layout import PrefixUse, PromptLayout, Section, prefix_use
from agentrt.context.park import (
    ParkedState,
    SessionParker,
    ToolWait,
    restore_sequence,
    save_sequence,
)
from agentrt.context.policy import Choice, CostMeter, CostModel, Decision, LinearCost, decide

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
