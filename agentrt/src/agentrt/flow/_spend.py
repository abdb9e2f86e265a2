"""The spend budget: tokens and dollars one run may spend on models, as plain state.

A run makes one :class:`SpendBudget` (at most ``max_cost_usd`` dollars and
``max_tokens`` tokens, either or both unset) and activates it around its
work; every client whose stack has a :class:`~agentrt.flow.SpendingModel`
layer (what :func:`~agentrt.flow.client_for_role` builds) asks it before a
call starts and charges it when the call returns, so all the run's clients
share one budget and nothing outside the run does — the way the retry
budget is scoped. Found through a context variable, as the metrics
recorder is: a client shared by many runs (an eval's cases) charges the
run it is serving.

A call is refused only *before* it starts: a call in flight when the
budget is reached is counted when it returns, so a run may end a little
over its budget (by the calls that were in flight), never by a call
started after it was reached.

Sans-IO: no clock and no I/O; the only side effect is ``on_reached``,
called once, with one line, when the budget is first reached.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from agentrt._errors import BudgetExhausted
from agentrt.llm._types import Usage

__all__ = ["Price", "SpendBudget", "SpendSnapshot", "StageSpend", "current_spend"]

_current: contextvars.ContextVar[SpendBudget | None] = contextvars.ContextVar(
    "agentrt_spend", default=None
)


def current_spend() -> SpendBudget | None:
    """The spend budget of the run this context serves, if it activated one."""
    return _current.get()


@dataclass(frozen=True, slots=True)
class Price:
    """An endpoint's price, in dollars per million input and output tokens."""

    input_per_mtok: float = 0.0
    output_per_mtok: float = 0.0

    def cost(self, usage: Usage) -> float:
        """Dollars for one call's usage (cached input tokens are billed as input)."""
        return (
            usage.input_tokens * self.input_per_mtok + usage.output_tokens * self.output_per_mtok
        ) / 1e6


@dataclass(frozen=True, slots=True)
class StageSpend:
    """What one stage's calls (or the whole run's) spent.

    ``cost_usd`` is ``None`` when none of its calls had a price (the
    tokens are known, the dollars are not); unpriced calls add no cost.
    """

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def plus(self, usage: Usage, cost: float | None) -> StageSpend:
        both = (self.cost_usd or 0.0) + cost if cost is not None else self.cost_usd
        return StageSpend(
            self.calls + 1,
            self.input_tokens + usage.input_tokens,
            self.output_tokens + usage.output_tokens,
            both,
        )


@dataclass(frozen=True, slots=True)
class SpendSnapshot:
    """The budget's limits and what was spent, per stage and in all, at one moment."""

    max_cost_usd: float | None
    max_tokens: int | None
    total: StageSpend
    stages: dict[str, StageSpend] = field(default_factory=dict)
    reached: str | None = None  # the line said when the budget was reached; None if not
    refused: int = 0  # calls not started because it was reached


class SpendBudget:
    """At most ``max_cost_usd`` dollars and ``max_tokens`` tokens (input + output) per run.

    ``None`` leaves that limit unset; with both unset the budget only
    counts. ``on_reached`` gets one line, once, when a limit is first met
    (by a call's charge, or by a call refused at a limit of 0). ``spent``
    resumes a run whose earlier part spent that (a run whose stages run in
    several processes): its counts go on, and a budget it had reached stays
    reached without saying so again.
    """

    def __init__(
        self,
        *,
        max_cost_usd: float | None = None,
        max_tokens: int | None = None,
        on_reached: Callable[[str], None] | None = None,
        spent: SpendSnapshot | None = None,
    ) -> None:
        if max_cost_usd is not None and max_cost_usd < 0:
            raise ValueError("max_cost_usd must be >= 0")
        if max_tokens is not None and max_tokens < 0:
            raise ValueError("max_tokens must be >= 0")
        self.max_cost_usd = max_cost_usd
        self.max_tokens = max_tokens
        self._on_reached = on_reached
        self._total = spent.total if spent else StageSpend()
        self._stages: dict[str, StageSpend] = dict(spent.stages) if spent else {}
        self._reached: str | None = spent.reached if spent else None
        self._refused = spent.refused if spent else 0

    @contextlib.contextmanager
    def activate(self) -> Iterator[SpendBudget]:
        """Make this the budget that calls in this context (and tasks it starts) spend."""
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)

    @property
    def spent_usd(self) -> float:
        return self._total.cost_usd or 0.0

    @property
    def tokens(self) -> int:
        return self._total.tokens

    def _limit_met(self) -> str | None:
        if self.max_cost_usd is not None and self.spent_usd >= self.max_cost_usd:
            return f"${self.spent_usd:.6g} spent of ${self.max_cost_usd:.6g}"
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            return f"{self.tokens} tokens spent of {self.max_tokens}"
        return None

    def _check(self) -> str | None:
        met = self._limit_met()
        if met is not None and self._reached is None:
            self._reached = f"model budget reached ({met} in {self._total.calls} call(s))"
            if self._on_reached is not None:
                self._on_reached(self._reached)
        return met

    def admit(self) -> None:
        """Before a call starts: raise :class:`BudgetExhausted` when a limit is met."""
        met = self._check()
        if met is not None:
            self._refused += 1
            raise BudgetExhausted(f"model budget reached ({met}): the call was not started")

    def charge(self, stage: str, usage: Usage, price: Price | None) -> None:
        """A finished call's usage, billed at ``price`` (``None``: unpriced, tokens only)."""
        cost = price.cost(usage) if price is not None else None
        self._total = self._total.plus(usage, cost)
        self._stages[stage] = self._stages.get(stage, StageSpend()).plus(usage, cost)
        self._check()

    def snapshot(self) -> SpendSnapshot:
        return SpendSnapshot(
            self.max_cost_usd,
            self.max_tokens,
            self._total,
            dict(self._stages),
            self._reached,
            self._refused,
        )
