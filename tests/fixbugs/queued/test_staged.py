"""The staged agent: every bug through four queue stages, the same answer as run_bug.

The run's queue is also read by ``fixbugs bench workers``' outcome (``_outcome``): the
suite pays for one staged run, not one here and another in the benchmark's tests.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from stagedkit import example_spec, staged_agent

from agentrt.pipeline import PipelineRunner
from agentrt.queues import EpochClock, StageState, open_queue
from fixbugs.bench.workers import _outcome
from fixbugs.queued import QUEUE_STAGES, decode
from fixbugs.run.driver import STAGES

pytestmark = pytest.mark.needs_root


async def test_two_bugs_run_through_the_four_stages_on_sqlite(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    q = open_queue(url, clock=EpochClock())
    events: list[tuple[str, dict[str, Any]]] = []
    agent = staged_agent(q.clock, lambda job, ev: events.append((job, ev)), sandbox_slots=2)
    runner = PipelineRunner(agent.pipeline(), q, poll_s=0.05)
    try:
        for n in range(2):
            await runner.submit(f"bug{n}", f"bug{n}", example_spec(tmp_path / f"ex{n}"))
        await runner.run(until_idle=True)
        recs = await q.records()
        assert {(r.item, r.stage) for r in recs} == {
            (f"bug{n}", s) for n in range(2) for s in QUEUE_STAGES
        }
        assert all(r.state is StageState.DONE for r in recs)
        for n in range(2):
            res = await q.results(f"bug{n}", list(QUEUE_STAGES))
            d = res["repair"]["report"]
            assert d["validated"] is True
            assert d["ranked_files"][0]["path"] == "shop/pricing.py"
            assert d["patch"].startswith("--- a/shop/pricing.py")
            assert d["reproduction"]["confirmed"]
            assert set(d["stages"]) == set(STAGES)
            # the report's timeline holds every stage's events, from every worker
            kinds = [(e["kind"], e["stage"]) for e in d["events"]]
            for s in STAGES:
                assert ("stage_started", s) in kinds and ("stage_finished", s) in kinds
            assert kinds[0] == ("run_started", "run")
            assert kinds[-1] == ("stage_finished", "validation")
            # the repair holds one core of the shared gate: one candidate at a time
            runs = sorted(
                (c["started_at"], c["started_at"] + c["wall_s"])
                for c in d["calls"]
                if c["stage"] == "validation" and c["kind"] == "tool"
            )
            assert runs, d["calls"]
            assert all(b[0] >= a[1] - 1e-6 for a, b in itertools.pairwise(runs)), runs
            # the hand-off between stages carries the evidence forward
            st = decode(res["root_cause"])
            assert st.root_cause is not None and st.root_cause.path == "shop/pricing.py"
            assert st.reproduction is not None and st.reproduction.confirmed
        # progress reached the publisher as it happened, per bug
        assert {job for job, _ in events} == {"bug0", "bug1"}
        finished = [job for job, ev in events if ev["kind"] == "run_finished"]
        assert sorted(finished) == ["bug0", "bug1"]
    finally:
        await q.aclose()
    await _the_benchmarks_outcome_reads_the_run(url)


async def _the_benchmarks_outcome_reads_the_run(url: str) -> None:
    """``fixbugs bench workers`` reads a run's outcome from the queue's records and
    reports: the two bugs finished and validated, a third never submitted is unfinished."""
    titles = {"bug0": "example (bug 0)", "bug1": "example (bug 1)", "bug2": "never submitted"}
    out = await _outcome(url, titles)
    assert out.finished == 2 and out.validated == 2
    first, last = out.first_claim, out.last_finish
    assert first is not None and last is not None and first < last
    assert set(out.stage_run_s) == set(QUEUE_STAGES)
    assert all(v > 0 for v in out.stage_run_s.values())
    done0, done1, never = out.bugs
    assert [(b.title, b.verdict) for b in (done0, done1)] == [
        ("example (bug 0)", "validated"),
        ("example (bug 1)", "validated"),
    ]
    assert done0.run_s > 0 and done1.run_s > 0
    assert (never.title, never.verdict, never.summary) == (
        "never submitted",
        "unfinished",
        "never claimed",
    )
