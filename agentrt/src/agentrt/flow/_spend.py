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

A call holds its worst case while it runs. Before it starts,
:meth:`SpendBudget.reserve` sets aside what it could cost at most (its
input tokens, estimated on the high side, plus its ``max_tokens`` of
output, at the endpoint's price); a call whose worst case does not fit in
what is left, after what was spent and what the calls in flight hold, is
not started. When it returns, :meth:`SpendBudget.settle` charges what it
really cost and frees the rest (:meth:`SpendBudget.release` frees all of a
call that failed). So concurrent calls can never together spend past the
budget: ``--max-cost 0.004`` once spent $0.0075 because calls in flight
were only counted when they returned. The guarantee holds as far as the
worst case holds: an endpoint that bills more input tokens than the
estimate's margin allows (:data:`INPUT_MARGIN`) can still overshoot by
that difference. Failed attempts that a retry layer repeats inside one
call are not billed by providers as a rule and are not counted.

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

__all__ = [
    "INPUT_MARGIN",
    "Price",
    "SpendBudget",
    "SpendHold",
    "SpendSnapshot",
    "StageSpend",
    "current_spend",
]

# The token estimate runs within about ±25% of a real tokenizer (agentrt.tokens):
# a call's worst case counts its estimated input tokens this much higher.
INPUT_MARGIN = 1.25

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
    # the calls not started, by stage: what the budget cut
    cut: dict[str, int] = field(default_factory=dict)
    held_usd: float = 0.0  # the worst case of the calls in flight at that moment
    held_tokens: int = 0


@dataclass(frozen=True, slots=True)
class SpendHold:
    """One started call's worst case, held until it settles (see :class:`SpendBudget`)."""

    stage: str
    tokens: int
    cost_usd: float
    price: Price | None


class SpendBudget:
    """At most ``max_cost_usd`` dollars and ``max_tokens`` tokens (input + output) per run.

    ``None`` leaves that limit unset; with both unset the budget only
    counts. ``on_reached`` gets one line, once, when a limit is first met
    (by a call's charge, or by a call refused because its worst case did
    not fit). ``spent``
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
        self._cut: dict[str, int] = dict(spent.cut) if spent else {}
        self._held_usd = 0.0
        self._held_tokens = 0
        self._holds = 0  # calls holding: at 0 the float sum is reset, not left to drift

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
        """Before a call whose worst case is unknown: raise :class:`BudgetExhausted`
        when a limit is met. :meth:`reserve` is the check that holds under concurrency."""
        met = self._check()
        if met is not None:
            self._refused += 1
            raise BudgetExhausted(f"model budget reached ({met}): the call was not started")

    def reserve(self, stage: str, worst: Usage, price: Price | None) -> SpendHold:
        """Hold ``worst`` (a call's most tokens, at ``price``) before the call starts.

        Raise :class:`BudgetExhausted` (the call is not started, and counted
        as cut under ``stage``) when a limit is met or when the worst case
        does not fit beside what was spent and what calls in flight hold.
        """
        cost = price.cost(worst) if price is not None else 0.0
        held = SpendHold(stage, worst.input_tokens + worst.output_tokens, cost, price)
        met = self._check()
        if met is None:
            met = self._no_room(held)
        if met is not None:
            self._refused += 1
            self._cut[stage] = self._cut.get(stage, 0) + 1
            if self._reached is None:
                self._reached = f"model budget reached ({met})"
                if self._on_reached is not None:
                    self._on_reached(self._reached)
            raise BudgetExhausted(f"model budget reached ({met}): the call was not started")
        self._held_usd += held.cost_usd
        self._held_tokens += held.tokens
        self._holds += 1
        return held

    def _no_room(self, held: SpendHold) -> str | None:
        """Why ``held`` does not fit (None: it does)."""
        cap, have = self.max_cost_usd, self.spent_usd + self._held_usd
        if cap is not None and held.price is not None and have + held.cost_usd > cap:
            return (
                f"${self.spent_usd:.6g} spent and ${self._held_usd:.6g} held by calls in flight "
                f"of ${cap:.6g}; a {held.stage} call of up to ${held.cost_usd:.6g} does not fit"
            )
        limit, used = self.max_tokens, self.tokens + self._held_tokens
        if limit is not None and used + held.tokens > limit:
            return (
                f"{self.tokens} tokens spent and {self._held_tokens} held by calls in flight "
                f"of {limit}; a {held.stage} call of up to {held.tokens} does not fit"
            )
        return None

    def release(self, held: SpendHold) -> None:
        """A reserved call ended with no answer: free what it held."""
        self._holds -= 1
        self._held_usd = max(0.0, self._held_usd - held.cost_usd) if self._holds else 0.0
        self._held_tokens = max(0, self._held_tokens - held.tokens)

    def settle(self, held: SpendHold, stage: str, usage: Usage) -> None:
        """A reserved call returned: free what it held, charge what it used."""
        self.release(held)
        self.charge(stage, usage, held.price)

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
            dict(self._cut),
            self._held_usd,
            self._held_tokens,
        )
