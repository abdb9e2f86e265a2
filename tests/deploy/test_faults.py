"""Faults at the process level under the compose topology: one run of :mod:`faults`.

While three bugs run on the API, the model-stage worker and two sandbox-stage workers
(processes, as deploy/compose.yaml starts them), a worker is killed with ``kill -9`` in
each of the four queue stages, Redis is restarted on its data directory, and the API is
killed and started again. Every job must still finish, no stage's effect may happen
twice (our reading is in :mod:`faultchecks`' docstring: a stage attempt whose effect was
recorded is never run again, each (job, stage) effect is recorded exactly once, and the
work redone is only that of attempts a kill cut short, counted apart from duplicated
work, which must be 0), and no event may
be lost from a job's SSE stream read with ``Last-Event-ID`` reconnections. The figures
are printed (``pytest -s`` shows them); ``python tests/deploy/faults.py --runs 10``
repeats the run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from faults import run_once

pytestmark = pytest.mark.needs_root


def test_kills_in_every_stage_a_redis_restart_and_an_api_restart_lose_and_repeat_nothing(
    tmp_path: Path,
) -> None:
    figures = asyncio.run(run_once(tmp_path))
    print(figures.line())
    assert figures.problems == []
    assert figures.kills == figures.kills_in_stage == 4
    assert figures.redis_restarts == 1 and figures.api_restarts == 1
    assert figures.done == figures.jobs >= 3 and not figures.failed
    assert figures.duplicated == 0 and figures.events_lost == 0
    assert figures.redone >= 4  # every kill cut at least its stage's attempt
    assert figures.sandbox_runs_redone >= 2  # the reproduction and repair kills
