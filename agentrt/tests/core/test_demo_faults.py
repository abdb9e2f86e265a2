"""`agentrt demo` under provider faults: failed chunks are results, never a traceback."""

from __future__ import annotations

import io
import json
import random

import pytest
from rich.console import Console

from agentrt._clock import FakeClock
from agentrt._demo import EXIT_NO_RESULT, failure_line, run_demo
from agentrt.flow import BreakerModel, CircuitBreaker, LocalRetryBudget, RetryingModel
from agentrt.sim import get_profile, in_process_model


async def _demo(tmp_path, monkeypatch, seed: int, faults: dict[str, float]):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGENTRT_CONFIG", raising=False)
    clock = FakeClock()
    profile = get_profile("default", faults=faults, seed=seed)
    out = io.StringIO()
    path = tmp_path / f"run{seed}.json"
    async with in_process_model(profile, clock=clock) as sim:
        model = RetryingModel(
            BreakerModel(sim, CircuitBreaker()),
            clock=clock,
            budget=LocalRetryBudget(),
            rng=random.Random(seed),
        )
        async with clock.autojumping():
            result = await run_demo(
                Console(file=out, width=200), json_path=path, model=model, clock=clock, chunks=6
            )
    return result, out.getvalue(), json.loads(path.read_text()), sim.engine


@pytest.mark.parametrize("seed", range(10))
async def test_demo_with_30_percent_faults_ends_in_results(tmp_path, monkeypatch, seed):
    result, text, data, engine = await _demo(
        tmp_path, monkeypatch, seed, {"error_503": 0.15, "overloaded_529": 0.15}
    )
    n = data["demo"]["chunks"]
    assert n == result.chunks >= 6
    failed = data["demo"]["failed_chunks"]
    if failed:
        assert f"{len(failed)} of {n} chunks failed (" in text
    # the simulator's count of answers agrees with the attempts in the metrics
    assert engine.stats()["requests"] == sum(c["attempts"] for c in data["calls"])
    assert result.exit_code in (0, EXIT_NO_RESULT)
    if result.exit_code == 0:
        assert len(failed) < n  # some chunk was summarized
        assert data["demo"]["judgment"] or "judgment failed (" in text
    else:
        assert len(failed) == n and "no result" in text
    assert "Traceback" not in text


async def test_demo_where_every_call_fails_has_a_documented_status(tmp_path, monkeypatch):
    result, text, data, _ = await _demo(tmp_path, monkeypatch, 1, {"error_503": 1.0})
    assert result.exit_code == EXIT_NO_RESULT == data["demo"]["exit_code"]
    n = data["demo"]["chunks"]
    assert f"{n} of {n} chunks failed (503" in text
    assert data["demo"]["judgment"] is None
    assert all(c["outcome"] == "error" for c in data["calls"])


def test_failure_line_names_the_reasons():
    from agentrt._errors import ProviderError

    errors = [ProviderError("x", status=503), ProviderError("y", status=503), TimeoutError()]
    assert failure_line(3, 8, errors) == "3 of 8 chunks failed (503 x2, TimeoutError)"
