"""Flow control: concurrency limits, rate limits, one retry budget, deadlines, routing.

Sans-IO cores (:class:`AdaptiveLimit`, :class:`RateBuckets`,
:class:`RetryBudget`, :func:`next_action`, :class:`AdaptiveThrottle`,
:class:`CircuitBreaker`) with thin async drivers; :class:`ResilientModel`
puts them around any model client, :class:`RoutedModel` picks a model per
stage with fallbacks, and :mod:`agentrt.flow._redis_store` shares limits and
the retry budget between processes.
"""

from agentrt.flow._adaptive import AdaptiveLimit, LimitAlgorithm, Sample, StaticLimit
from agentrt.flow._breaker import BreakerState, CircuitBreaker, CircuitOpen
from agentrt.flow._clients import client_for_role, retry_budget, retry_policy
from agentrt.flow._deadline import (
    Deadline,
    DeadlineExceeded,
    current_deadline,
    fail_after,
    fail_at,
    move_on_after,
    time_left,
)
from agentrt.flow._gate import (
    LocalRateGate,
    LocalRetryBudget,
    RateGate,
    SharedBudget,
    with_headroom,
)
from agentrt.flow._limiter import ConcurrencyLimiter, Permit
from agentrt.flow._ratelimit import (
    HeaderView,
    RateBuckets,
    Reservation,
    parse_duration,
    parse_rate_headers,
)
from agentrt.flow._resilient import ResilientModel, is_pacing
from agentrt.flow._retry import (
    GiveUp,
    RetryAfter,
    RetryBudget,
    RetryPolicy,
    RetryVerdict,
    is_retryable,
    next_action,
)
from agentrt.flow._routing import RoutedModel, RoutingTable
from agentrt.flow._throttle import AdaptiveThrottle, Throttled

__all__ = [
    "AdaptiveLimit",
    "AdaptiveThrottle",
    "BreakerState",
    "CircuitBreaker",
    "CircuitOpen",
    "ConcurrencyLimiter",
    "Deadline",
    "DeadlineExceeded",
    "GiveUp",
    "HeaderView",
    "LimitAlgorithm",
    "LocalRateGate",
    "LocalRetryBudget",
    "Permit",
    "RateBuckets",
    "RateGate",
    "Reservation",
    "ResilientModel",
    "RetryAfter",
    "RetryBudget",
    "RetryPolicy",
    "RetryVerdict",
    "RoutedModel",
    "RoutingTable",
    "Sample",
    "SharedBudget",
    "StaticLimit",
    "Throttled",
    "client_for_role",
    "current_deadline",
    "fail_after",
    "fail_at",
    "is_pacing",
    "is_retryable",
    "move_on_after",
    "next_action",
    "parse_duration",
    "parse_rate_headers",
    "retry_budget",
    "retry_policy",
    "time_left",
    "with_headroom",
]
