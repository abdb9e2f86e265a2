"""What flow control is doing right now: limits in force and retry budget use.

Read from the clients' own layers (a
:class:`~agentrt.flow.ConcurrencyLimitedModel` exposes its limiter, a
:class:`~agentrt.flow.RetryingModel` its budget), so the dashboard and ``/metrics`` show the
limits the adaptive limiter has learned, not the configured starting points.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from agentrt._json import JsonValue
from agentrt.flow._concurrency_model import ConcurrencyLimitedModel
from agentrt.flow._gate import LocalRetryBudget
from agentrt.flow._retry_model import RetryingModel
from agentrt.llm._protocol import ChatModel
from agentrt.llm._wrapper import find_layer

__all__ = ["FlowState", "LimitState", "RetryBudgetState", "flow_state"]


@dataclass(frozen=True, slots=True)
class LimitState:
    client: str
    limit: int
    in_use: int
    waiting: int


@dataclass(frozen=True, slots=True)
class RetryBudgetState:
    retrying: int  # retries in progress
    in_flight_cap: int  # most retries allowed at once now
    balance: float  # retries the over-time allowance holds
    burst: float
    calls: int
    retries: int
    denied: int


@dataclass(frozen=True, slots=True)
class FlowState:
    limits: tuple[LimitState, ...]
    retry_budget: RetryBudgetState | None

    def to_dict(self) -> dict[str, JsonValue]:
        return {
            "limits": [asdict(limit) for limit in self.limits],
            "retry_budget": asdict(self.retry_budget) if self.retry_budget else None,
        }


def flow_state(clients: Iterable[ChatModel]) -> FlowState:
    """Limits of every limited client and the (first local) retry budget among them."""
    limits: list[LimitState] = []
    budget: RetryBudgetState | None = None
    seen: set[int] = set()
    for c in clients:
        if id(c) in seen:
            continue
        seen.add(id(c))
        limited = find_layer(c, ConcurrencyLimitedModel)
        if limited is not None:
            lim = limited.limiter
            limits.append(LimitState(c.name, lim.limit, lim.in_use, lim.waiting))
        retrying = find_layer(c, RetryingModel)
        if (
            budget is None
            and retrying is not None
            and isinstance(retrying.budget, LocalRetryBudget)
        ):
            b = retrying.budget.budget
            budget = RetryBudgetState(
                b.retrying,
                b.in_flight_cap(),
                round(b.balance, 3),
                b.rules.burst,
                b.calls,
                b.retries,
                b.denied,
            )
    return FlowState(tuple(limits), budget)
