"""``--max-cost`` holds under concurrency (issue 45): a slow endpoint, many calls in flight.

Each run fires 16 workers at the simulator's ``hosted`` profile (about a
second before the first token, 50 tokens/s) on a FakeClock, each calling
until the budget refuses it. Before reservation a call was refused only
once the spend had reached the budget, so the calls already in flight were
counted when they returned and ``--max-cost 0.004`` spent $0.0075; now each
call holds its worst case while it runs. The bill is the simulator's own
count of the tokens it served, at the price.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import pytest

from agentrt import BudgetExhausted, FakeClock
from agentrt.flow import Price, SpendBudget, SpendingModel
from agentrt.llm import ChatModel, ChatRequest, ChatResult
from agentrt.llm._wrapper import WrapperModel
from agentrt.metrics import stage
from agentrt.sim import ResponderInput, in_process_model

MAX_COST = 0.004
PRICE = Price(input_per_mtok=0.5, output_per_mtok=2.0)  # a call's worst case: ~$0.0006
RUNS = 20
WORKERS = 16


def _responder(seed: int) -> Callable[[ResponderInput], str]:
    rng = random.Random(seed)

    def answer(_: ResponderInput) -> str:
        # answers from a few words to past max_tokens (the simulator cuts them there)
        return " ".join(["evidence"] * rng.randint(3, 400))

    return answer


class _CountedAfter(WrapperModel):
    """The old rule, for contrast: refused only once the spend reached the budget."""

    def __init__(self, inner: ChatModel, price: Price) -> None:
        super().__init__(inner)
        self.price = price
        self.budget = SpendBudget(max_cost_usd=MAX_COST)

    async def complete(self, request: ChatRequest) -> ChatResult:
        self.budget.admit()
        result = await self.inner.complete(request)
        self.budget.charge(request.stage or "x", result.usage, self.price)
        return result


async def _run(seed: int, *, old_rule: bool = False) -> tuple[float, SpendBudget]:
    """One run's bill (from the simulator's counts) and its budget."""
    clock = FakeClock()
    rng = random.Random(seed)
    async with (
        clock.autojumping(),
        in_process_model("hosted", clock=clock, responder=_responder(seed)) as sim,
    ):
        counted = _CountedAfter(sim, PRICE)
        model: ChatModel = counted if old_rule else SpendingModel(sim, price=PRICE)
        budget = counted.budget if old_rule else SpendBudget(max_cost_usd=MAX_COST)

        async def worker(i: int) -> None:
            prompt = "log line: " + "x" * rng.randint(200, 6000)  # 50 to 1,500 tokens
            req = ChatRequest.of(prompt, max_tokens=200, stage=("map", "judge")[i % 2])
            while True:
                try:
                    await model.complete(req)
                except BudgetExhausted:
                    return

        with budget.activate(), stage("run"):
            await asyncio.gather(*(worker(i) for i in range(WORKERS)))
        served = sim.engine.stats()
    tokens_in, tokens_out = served["tokens_in"], served["tokens_out"]
    assert isinstance(tokens_in, int) and isinstance(tokens_out, int)
    return (tokens_in * PRICE.input_per_mtok + tokens_out * PRICE.output_per_mtok) / 1e6, budget


async def test_max_cost_is_never_exceeded_over_20_runs_of_concurrent_calls() -> None:
    for seed in range(RUNS):
        billed, budget = await _run(seed)
        snap = budget.snapshot()
        assert billed <= MAX_COST, f"run {seed}: ${billed:.6f} billed of ${MAX_COST}"
        assert budget.spent_usd <= MAX_COST and budget.spent_usd == pytest.approx(billed)
        # the budget was the limit, and the report can say what it cut, by stage
        assert snap.reached is not None and "does not fit" in snap.reached
        assert sum(snap.cut.values()) == snap.refused >= WORKERS
        assert set(snap.cut) <= {"map", "judge"}
        assert snap.held_usd == 0.0 and snap.total.calls > 0


async def test_the_old_rule_overshoots_on_the_same_load() -> None:
    # the check above is sensitive: counting calls only when they return overran the budget
    over = [billed for billed, _ in [await _run(seed, old_rule=True) for seed in range(3)]]
    assert max(over) > MAX_COST
