"""The spend budget: calls admitted and charged at an endpoint's price, against the simulator.

Every test runs the real OpenAI client against the in-process simulator
(which reports usage as a provider does) on a FakeClock: no sleeps, no network.
"""

from __future__ import annotations

import asyncio

import pytest

from agentrt import BudgetExhausted, FakeClock
from agentrt._config import load_settings
from agentrt.flow import (
    Price,
    SpendBudget,
    SpendingModel,
    StageSpend,
    client_for_role,
    current_spend,
    worst_case,
)
from agentrt.llm import ChatRequest, Completed, Usage
from agentrt.metrics import MetricsRecorder, stage
from agentrt.sim import ResponderInput, in_process_model

# dollars per million tokens, large enough that one call's cost is a readable number
PRICE = Price(input_per_mtok=1000.0, output_per_mtok=4000.0)


def _answer(_: ResponderInput) -> str:
    return "the discount divides by ten"


def test_a_price_bills_input_and_output_tokens_per_million() -> None:
    assert Price(2.0, 8.0).cost(Usage(500_000, 250_000)) == pytest.approx(3.0)
    s = StageSpend().plus(Usage(10, 5), None)
    assert s.cost_usd is None and s.tokens == 15  # unpriced: tokens known, dollars not
    assert s.plus(Usage(1, 1), 0.5).cost_usd == 0.5


def test_a_budget_refuses_calls_once_a_limit_is_met_and_says_so_once() -> None:
    lines: list[str] = []
    b = SpendBudget(max_tokens=100, on_reached=lines.append)
    b.admit()
    b.charge("map", Usage(60, 10), None)
    b.admit()  # 70 of 100: still open
    b.charge("judge", Usage(25, 10), None)  # 105: reached by this charge
    assert len(lines) == 1 and "105 tokens spent of 100" in lines[0]
    for _ in range(2):
        with pytest.raises(BudgetExhausted, match="not started"):
            b.admit()
    snap = b.snapshot()
    assert snap.refused == 2 and snap.reached == lines[0] and len(lines) == 1
    assert snap.stages["map"].tokens == 70 and snap.stages["judge"].calls == 1
    zero = SpendBudget(max_cost_usd=0.0, on_reached=lines.append)
    with pytest.raises(BudgetExhausted):
        zero.admit()  # a limit of 0 is met before any call
    assert len(lines) == 2


async def test_calls_stop_at_the_budget_against_the_simulator_with_a_price() -> None:
    clock = FakeClock()
    recorder = MetricsRecorder(clock)
    req = ChatRequest.of("how is the total computed?", stage="fix", max_tokens=16)
    async with (
        clock.autojumping(),
        in_process_model("default", clock=clock, responder=_answer, recorder=recorder) as sim,
    ):
        model = SpendingModel(sim, price=PRICE)
        reached: list[str] = []
        budget = SpendBudget(max_cost_usd=0.3, on_reached=reached.append)
        done = 0
        with budget.activate(), recorder.activate():
            for _ in range(50):
                try:
                    await model.complete(req)
                except BudgetExhausted:
                    break
                done += 1
        served = sim.engine.stats()
    snap = budget.snapshot()
    assert 1 <= done < 50 and snap.refused == 1 and len(reached) == 1
    assert snap.cut == {"fix": 1} and "does not fit" in reached[0]
    # every call that ran is charged at the price, from the usage the endpoint reported
    model_records = [r for r in recorder.records if r.kind == "model"]
    assert len(model_records) == done
    in_tok = sum(r.input_tokens for r in model_records)
    out_tok = sum(r.output_tokens for r in model_records)
    assert in_tok > 0 and out_tok > 0
    assert snap.total.cost_usd == pytest.approx(PRICE.cost(Usage(in_tok, out_tok)))
    assert snap.stages["fix"].calls == done
    # the budget holds: the calls stopped where the next one's worst case no longer fit
    spent = snap.total.cost_usd
    assert spent is not None and spent <= 0.3
    assert spent + PRICE.cost(worst_case(req)) > 0.3
    assert snap.held_usd == 0.0  # nothing in flight holds any of it now
    # the refused call reached no endpoint; the bill is the simulator's own count
    assert served["requests"] == done
    assert (served["tokens_in"], served["tokens_out"]) == (in_tok, out_tok)


async def test_calls_in_flight_hold_their_worst_case_and_a_stream_is_charged_at_its_end() -> None:
    clock = FakeClock()
    async with (
        clock.autojumping(),
        in_process_model("default", clock=clock, responder=_answer) as sim,
    ):
        model = SpendingModel(sim, price=PRICE)
        one_call = worst_case(ChatRequest.of("why?")).input_tokens + 256
        budget = SpendBudget(max_tokens=one_call + one_call // 2)  # room for one call, not two
        with budget.activate(), stage("root_cause"):

            async def one() -> None:
                await model.complete(ChatRequest.of("why?"))

            # both asked before either returns: the second's worst case does not fit
            results = await asyncio.gather(one(), one(), return_exceptions=True)
            assert sum(isinstance(r, BudgetExhausted) for r in results) == 1
            # the first returned and freed what it did not use: a stream fits now
            events = [ev async for ev in model.stream(ChatRequest.of("and now?"))]
        assert isinstance(events[-1], Completed)
        streamed = SpendBudget()
        with streamed.activate():
            events = [ev async for ev in model.stream(ChatRequest.of("why?", stage="judge"))]
        assert isinstance(events[-1], Completed)
    snap = budget.snapshot()
    assert snap.stages["root_cause"].calls == 2 and snap.refused == 1
    assert snap.cut == {"root_cause": 1} and budget.tokens <= budget.max_tokens  # type: ignore[operator]
    assert snap.held_tokens == 0
    usage = events[-1].result.usage
    assert streamed.snapshot().stages["judge"].cost_usd == pytest.approx(PRICE.cost(usage))
    assert current_spend() is None  # activation is scoped


def test_a_call_that_fails_frees_its_hold_and_one_cancelled_keeps_it() -> None:
    b = SpendBudget(max_cost_usd=1.0)
    worst = Usage(1000, 1000)
    price = Price(100.0, 100.0)  # worst case $0.2
    holds = [b.reserve("map", worst, price) for _ in range(5)]
    with pytest.raises(BudgetExhausted, match="held by calls in flight"):
        b.reserve("map", worst, price)
    b.release(holds[0])  # failed: not billed, its room is free again
    again = b.reserve("judge", worst, price)
    b.settle(again, "judge", Usage(100, 10))
    assert b.spent_usd == pytest.approx(0.011) and b.snapshot().held_usd == pytest.approx(0.8)
    assert b.snapshot().cut == {"map": 1}


def test_role_clients_carry_their_endpoints_price(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = {
        "AGENTRT_BASE_URL": "http://127.0.0.1:9/v1",
        "AGENTRT_MODEL": "m",
        "AGENTRT_ENDPOINT_ENV_PRICE_OUTPUT_PER_MTOK": "15",
    }
    priced = client_for_role(load_settings(env=env), "judge")
    assert isinstance(priced, SpendingModel) and priced.price == Price(0.0, 15.0)
    unpriced = {k: v for k, v in env.items() if "PRICE" not in k}
    plain = client_for_role(load_settings(env=unpriced), "judge", resilient=False)
    assert isinstance(plain, SpendingModel) and plain.price is None
