"""The what-if profiler: where a recorded run's time went, and what a change would buy."""

from agentrt.profile._breakdown import RunBreakdown, StageBreakdown, breakdown, load_run
from agentrt.profile._report import print_profile, profile_json
from agentrt.profile._whatif import Estimate, WhatIf, estimates

__all__ = [
    "Estimate",
    "RunBreakdown",
    "StageBreakdown",
    "WhatIf",
    "breakdown",
    "estimates",
    "load_run",
    "print_profile",
    "profile_json",
]
