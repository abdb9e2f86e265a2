"""The report's first-hypothesis time is the hypothesis event's own time, one clock reading."""

from __future__ import annotations

import shutil
from pathlib import Path

from agentrt import FakeClock
from fixbugs.examples import example_dir
from fixbugs.inputs import load_inputs
from fixbugs.run.agent import run_bug
from fixbugs.run.context import AgentOptions
from fixbugs.run.progress import collecting_sink
from fixbugs.sandbox.testing import PlainWorkspace


class TickingClock(FakeClock):
    """Every reading is 1 ms after the last: two readings never agree, as under load."""

    def now(self) -> float:
        self.advance(0.001)
        return super().now()


async def test_first_hypothesis_s_equals_the_hypothesis_event_time(tmp_path: Path) -> None:
    example = tmp_path / "invoice"
    shutil.copytree(example_dir("invoice"), example)
    inputs = load_inputs(example / "report.md", example / "repo")
    sink, events = collecting_sink()
    report = await run_bug(
        inputs,
        models=None,
        options=AgentOptions(use_model=False),
        clock=TickingClock(),
        sink=sink,
        workspace=PlainWorkspace.create,
        until="analysis",
    )
    hypothesis = next(e for e in events if e.kind == "hypothesis")
    assert report.model.first_hypothesis_s == hypothesis.at_s
