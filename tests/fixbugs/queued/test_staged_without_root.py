"""The staged agent without root: the four queue stages through a plain workspace.

:class:`~fixbugs.queued.StagedAgent` opens each sandbox stage's copy with
the workspace it is given (:mod:`fixbugs.sandbox.executor`); with
:class:`~fixbugs.sandbox.testing.PlainWorkspace` the whole staged pipeline
runs as any user, in the normal suite.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from stagedkit import example_spec, options

from agentrt.llm import FakeModel
from agentrt.pipeline import PipelineRunner
from agentrt.queues import EpochClock, StageState, open_queue
from fixbugs.queued import QUEUE_STAGES, BugSpec, StagedAgent, StagedConfig
from fixbugs.run.agent import run_bug
from fixbugs.run.context import Models
from fixbugs.run.driver import STAGES
from fixbugs.sandbox.testing import PlainWorkspace


async def test_a_bug_runs_through_the_four_stages_without_root(tmp_path: Path) -> None:
    """The staged pipeline's report, and the same findings as ``run_bug``'s on the same bug."""
    commands: list[str] = []
    q = open_queue(f"sqlite:///{tmp_path / 'q.db'}", clock=EpochClock())
    events: list[tuple[str, dict[str, Any]]] = []
    agent = StagedAgent(
        Models(map=FakeModel(), judge=FakeModel()),
        options,
        clock=q.clock,
        publish=lambda job, ev: events.append((job, ev)),
        config=StagedConfig(sandbox_slots=1),
        workspace=functools.partial(PlainWorkspace.create, commands=commands),
    )
    runner = PipelineRunner(agent.pipeline(), q, poll_s=0.05)
    try:
        spec = example_spec(tmp_path / "ex")
        await runner.submit("bug", "bug", spec)
        await runner.run(until_idle=True)
        recs = await q.records()
        assert {r.stage for r in recs} == set(QUEUE_STAGES)
        assert all(r.state is StageState.DONE for r in recs)
        d = (await q.results("bug", list(QUEUE_STAGES)))["repair"]["report"]
        assert d["validated"] is True and d["patch"].startswith("--- a/shop/pricing.py")
        assert d["reproduction"]["confirmed"]
        assert set(d["stages"]) == set(STAGES)
        # the tests ran (reproduction, SBFL, validation) only through the workspace given
        assert any("coverage" in c for c in commands)
        assert sum("pytest" in c for c in commands) >= 3
    finally:
        await q.aclose()
    # the same stages, driven as one graph in one process, find the same things
    whole = await run_bug(
        BugSpec.from_payload(spec).load(),
        models=Models(map=FakeModel(), judge=FakeModel()),
        options=await options(),
        workspace=PlainWorkspace.create,
    )
    w = whole.to_dict()
    for key in ("ranked_files", "root_cause", "suspicious_regions", "evidence"):
        assert w[key] == d[key], key
    # the output's tail says how long the tests took
    assert {**w["reproduction"], "output_tail": ""} == {**d["reproduction"], "output_tail": ""}
    assert w["validated"] is True
    proposed = [n for r in (d, w) for n in r["notes"] if n.startswith("repair regions: ")]
    assert len(proposed) == 2 and proposed[0] == proposed[1]
