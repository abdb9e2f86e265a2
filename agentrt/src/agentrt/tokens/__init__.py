"""Token counting and the latency model (token math)."""

from agentrt.tokens._counting import (
    MESSAGE_OVERHEAD_TOKENS,
    EstimateCounter,
    ExactCounter,
    TokenCounter,
    estimate_tokens,
)
from agentrt.tokens._latency import FanoutEstimate, LatencyModel, calibrate
from agentrt.tokens._plan import Plan, make_plan

__all__ = [
    "MESSAGE_OVERHEAD_TOKENS",
    "EstimateCounter",
    "ExactCounter",
    "FanoutEstimate",
    "LatencyModel",
    "Plan",
    "TokenCounter",
    "calibrate",
    "estimate_tokens",
    "make_plan",
]
