"""Flow control: concurrency limits, rate limits, one retry budget, deadlines, routing.

Sans-IO cores (:class:`AdaptiveLimit`, :class:`RateBuckets`,
:class:`RetryBudget`, :func:`next_action`, :class:`AdaptiveThrottle`,
:class:`CircuitBreaker`) with thin async drivers. Each is put around any
model client by a wrapper model of its own, stacked in this order (the
order in which an attempt is admitted)::

    RetryingModel(                      # deadline, retries, one retry budget
        BreakerModel(                   # circuit breaker
            ThrottlingModel(            # client-side adaptive throttling
                RateLimitedModel(       # RPM/TPM
                    ConcurrencyLimitedModel(backend), gate), throttle), breaker),
        budget=budget)

Any layer but the retrying one may be left out; :func:`client_for_role`
builds the stack from configuration, under a :class:`SpendingModel` that
holds the calls to the run's :class:`SpendBudget` (tokens and dollars).
:class:`RoutedModel` picks a model per stage with fallbacks, and
:mod:`agentrt.flow._redis_store` shares limits and the retry budget
between processes.
"""

from agentrt.flow._adaptive import AdaptiveLimit, LimitAlgorithm, Sample, StaticLimit
from agentrt.flow._attempt import is_pacing
from agentrt.flow._breaker import BreakerState, CircuitBreaker, CircuitOpen
from agentrt.flow._breaker_model import BreakerModel
from agentrt.flow._clients import client_for_role, retry_budget, retry_policy
from agentrt.flow._concurrency_model import ConcurrencyLimitedModel
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
from agentrt.flow._rate_model import RateLimitedModel
from agentrt.flow._ratelimit import (
    HeaderView,
    RateBuckets,
    Reservation,
    parse_duration,
    parse_rate_headers,
)
from agentrt.flow._retry import (
    GiveUp,
    RetryAfter,
    RetryBudget,
    RetryBudgetRules,
    RetryPolicy,
    RetryVerdict,
    is_retryable,
    next_action,
)
from agentrt.flow._retry_model import RetryingModel
from agentrt.flow._routing import RoutedModel, RoutingTable
from agentrt.flow._spend import (
    INPUT_MARGIN,
    Price,
    SpendBudget,
    SpendHold,
    SpendSnapshot,
    StageSpend,
    current_spend,
)
from agentrt.flow._spend_model import SpendingModel, worst_case
from agentrt.flow._throttle import AdaptiveThrottle, Throttled
from agentrt.flow._throttle_model import ThrottlingModel

__all__ = [
    "INPUT_MARGIN",
    "AdaptiveLimit",
    "AdaptiveThrottle",
    "BreakerModel",
    "BreakerState",
    "CircuitBreaker",
    "CircuitOpen",
    "ConcurrencyLimitedModel",
    "ConcurrencyLimiter",
    "Deadline",
    "DeadlineExceeded",
    "GiveUp",
    "HeaderView",
    "LimitAlgorithm",
    "LocalRateGate",
    "LocalRetryBudget",
    "Permit",
    "Price",
    "RateBuckets",
    "RateGate",
    "RateLimitedModel",
    "Reservation",
    "RetryAfter",
    "RetryBudget",
    "RetryBudgetRules",
    "RetryPolicy",
    "RetryVerdict",
    "RetryingModel",
    "RoutedModel",
    "RoutingTable",
    "Sample",
    "SharedBudget",
    "SpendBudget",
    "SpendHold",
    "SpendSnapshot",
    "SpendingModel",
    "StageSpend",
    "StaticLimit",
    "Throttled",
    "ThrottlingModel",
    "client_for_role",
    "current_deadline",
    "current_spend",
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
    "worst_case",
]
