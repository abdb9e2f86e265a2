"""Clients for configured roles: the backend under the runtime's flow layers.

The one place that stacks the flow layers for a configured endpoint. Lives
in :mod:`agentrt.flow` (not :mod:`agentrt.llm`) so that the model clients
never import the flow control that wraps them.
"""

from __future__ import annotations

import random

from agentrt._clock import Clock
from agentrt._config import DEFAULT_ROLE, EndpointConfig, Settings
from agentrt.flow._breaker import CircuitBreaker
from agentrt.flow._breaker_model import BreakerModel
from agentrt.flow._concurrency_model import ConcurrencyLimitedModel
from agentrt.flow._gate import LocalRetryBudget, SharedBudget
from agentrt.flow._retry import RetryBudget, RetryBudgetRules, RetryPolicy
from agentrt.flow._retry_model import RetryingModel
from agentrt.flow._spend import Price
from agentrt.flow._spend_model import SpendingModel
from agentrt.llm._factory import make_client
from agentrt.llm._protocol import ChatModel
from agentrt.llm._wrapper import max_concurrency
from agentrt.metrics._recorder import MetricsRecorder

__all__ = ["client_for_role", "endpoint_price", "retry_budget", "retry_policy"]


def endpoint_price(cfg: EndpointConfig) -> Price | None:
    """The endpoint's configured price (an unset half is 0), or ``None`` when it has none."""
    if not cfg.priced:
        return None
    return Price(cfg.price_input_per_mtok or 0.0, cfg.price_output_per_mtok or 0.0)


def retry_budget(settings: Settings) -> LocalRetryBudget:
    """A fresh retry budget with the ``[retry]`` settings.

    Build one per run and give it to every client of that run: they then
    share it, and nothing outside the run does.
    """
    r = settings.retry
    return LocalRetryBudget(
        RetryBudget(
            RetryBudgetRules(
                share=r.share,
                min_in_flight=r.min_in_flight,
                ratio=r.ratio,
                burst=r.burst,
                brownout_ratio=r.brownout_ratio,
                window=r.window,
            )
        )
    )


def retry_policy(settings: Settings) -> RetryPolicy:
    r = settings.retry
    return RetryPolicy(max_attempts=r.max_attempts, base_s=r.base_s, cap_s=r.cap_s)


def client_for_role(
    settings: Settings,
    role: str = DEFAULT_ROLE,
    *,
    clock: Clock | None = None,
    recorder: MetricsRecorder | None = None,
    resilient: bool = True,
    budget: SharedBudget | None = None,
    rng: random.Random | None = None,
) -> ChatModel:
    """The client serving ``role``, behind the runtime's one retrying layer.

    With ``resilient`` (the default) the backend client is held to its
    endpoint's ``max_concurrency`` (:class:`~agentrt.flow.ConcurrencyLimitedModel`,
    where one is set), behind a circuit breaker (:class:`~agentrt.flow.BreakerModel`)
    and a :class:`~agentrt.flow.RetryingModel` with the configured retry
    policy, full-jitter backoff, propagating deadlines and one metrics
    record per call whose ``attempts`` counts the requests sent. ``budget``
    is the retry budget to share (see :func:`retry_budget`); without one
    the client gets its own, built from ``settings``. Either way the
    outermost layer is a :class:`~agentrt.flow.SpendingModel` at the
    endpoint's price: the run's spend budget, where one is active, admits
    and charges every call.
    """
    name, cfg = settings.endpoint_for(role)
    price = endpoint_price(cfg)
    if not resilient:
        bare = make_client(cfg, name=name, clock=clock, recorder=recorder)
        return SpendingModel(bare, price=price)
    backend = make_client(cfg, name=name, clock=clock)
    limited = ConcurrencyLimitedModel(backend) if max_concurrency(backend) else backend
    retrying = RetryingModel(
        BreakerModel(limited, CircuitBreaker()),
        budget=budget if budget is not None else retry_budget(settings),
        policy=retry_policy(settings),
        name=name,
        clock=clock,
        recorder=recorder,
        rng=rng,
    )
    return SpendingModel(retrying, price=price)
