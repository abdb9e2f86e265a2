"""Session capacity: admission under a budget and resident-time measurement."""

from __future__ import annotations

import asyncio

import pytest

from agentrt._clock import FakeClock
from agentrt.llm import ChatRequest, FakeModel
from agentrt.pipeline import SessionBudget, SessionGate
from agentrt.tokens import LatencyModel


def test_budget_admits_up_to_capacity_then_first_come_first_served() -> None:
    b = SessionBudget(2)
    assert b.request("a") and b.request("b")
    assert not b.request("c") and not b.request("d")
    assert b.release("a") == ["c"]
    assert b.release("d") == []  # leaving the line admits nobody
    assert b.release("b") == []
    assert b.held == {"c"} and b.peak == 2


async def agent(gate: SessionGate, model: FakeModel, job: str, *, concurrent: bool) -> None:
    async with gate.session(job) as s:
        for step in range(3):
            await s.complete(model, ChatRequest.of(f"{job} step {step}", max_tokens=10))

            async def tool() -> None:
                async with s.tool():
                    await model.clock.sleep(2.0)

            if concurrent:
                await asyncio.gather(*(tool() for _ in range(3)))
            else:
                for _ in range(3):
                    await tool()
        await s.complete(model, ChatRequest.of(f"{job} answer", max_tokens=10))


@pytest.mark.parametrize(
    ("concurrent", "resident"), [(False, 3 * 6.0 + 4 * 1.0), (True, 3 * 2.0 + 4 * 1.0)]
)
async def test_resident_time_counts_tool_waits_and_budget_bounds_sessions(
    concurrent: bool, resident: float
) -> None:
    clock = FakeClock()
    # each call: 0.1 s TTFT + 9 more tokens at 10 tok/s = 1.0 s
    model = FakeModel(
        clock=clock, latency=LatencyModel(0.1, 0.0, 10.0), responder=lambda _: "x" * 40
    )
    gate = SessionGate(3, clock)
    async with clock.autojumping():
        await asyncio.gather(
            *(agent(gate, model, f"j{i}", concurrent=concurrent) for i in range(7))
        )
    rep = gate.report()
    assert rep.sessions == 7 and rep.peak_held == 3
    assert rep.mean_resident_s == pytest.approx(resident)
    assert all(s.tool_calls == 9 for s in gate.finished)
    # 7 sessions, 3 at a time: three rounds of one session's resident time
    assert clock.now() == pytest.approx(3 * resident)
    waits = sorted(s.admission_wait_s for s in gate.finished)
    assert waits == pytest.approx([0, 0, 0, resident, resident, resident, 2 * resident])
    assert rep.sessions_per(600.0) == pytest.approx(3 * 600.0 / resident)
