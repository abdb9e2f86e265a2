"""The overhead benchmark still runs, reporting LangGraph as unavailable, without it."""

from __future__ import annotations

import sys

import pytest

from agentrt.bench.overhead import OverheadOptions, run_overhead


async def test_overhead_runs_without_langgraph(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langgraph.graph", None)  # import fails
    res = await run_overhead(
        OverheadOptions(sizes=(50, 100), limit=8, rounds=1, langgraph_max_n=10_000)
    )
    assert res.figures["langgraph_us"] == [None, None]
    assert res.figures["langgraph_available"] is False
    assert len(res.figures["agentrt_us"]) == 2
    assert any("not installed" in n for n in res.notes)
