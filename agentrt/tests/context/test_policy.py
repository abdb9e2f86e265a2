"""The keep/park/recompute choice as a pure function of measured costs."""

from __future__ import annotations

import pytest

from agentrt.context import CostMeter, CostModel, LinearCost, decide

COSTS = CostModel(
    prefill=LinearCost(0.0, 2e-3),  # 2 ms per token
    save=LinearCost(0.005, 2e-5),
    restore=LinearCost(0.005, 2e-5),
)


def test_contended_long_context_is_parked() -> None:
    d = decide(COSTS, 2000, wait_s=1.0, demand=1.0)
    assert d.choice == "park"
    assert d.recompute_s == pytest.approx(4.0)
    assert d.park_s == pytest.approx(0.01 + 0.08)
    assert d.keep_s == pytest.approx(1.0)
    assert "2000 tokens" in d.reason


def test_idle_engine_keeps_the_context() -> None:
    assert decide(COSTS, 2000, wait_s=30.0, demand=0.0).choice == "keep"


def test_tiny_context_is_recomputed() -> None:
    # 3 tokens: 6 ms of prefill against 10 ms of fixed save/restore cost
    assert decide(COSTS, 3, wait_s=1.0, demand=1.0).choice == "recompute"


def test_short_wait_on_a_shared_engine_keeps() -> None:
    # a 10 ms wait with a tenth of the KV memory: keeping costs 1 ms
    assert decide(COSTS, 2000, wait_s=0.01, demand=1.0, kv_share=0.1).choice == "keep"


def test_without_state_saving_it_never_parks() -> None:
    d = decide(COSTS, 2000, wait_s=10.0, demand=1.0, can_park=False)
    assert d.choice == "recompute"
    assert d.cost("park") == float("inf")
    with pytest.raises(ValueError):
        decide(COSTS, -1, wait_s=1.0, demand=1.0)


def test_meter_fits_cost_lines_from_measurements() -> None:
    m = CostMeter(COSTS)
    assert m.model() == COSTS  # nothing measured: defaults
    m.prefill(100, 0.15)
    m.prefill(300, 0.35)
    m.save(500, 0.01)  # one size: a line through the origin
    fitted = m.model()
    assert fitted.prefill.base_s == pytest.approx(0.05)
    assert fitted.prefill.per_token_s == pytest.approx(1e-3)
    assert fitted.save(1000) == pytest.approx(0.02)
    assert fitted.restore == COSTS.restore
