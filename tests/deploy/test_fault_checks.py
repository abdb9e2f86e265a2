"""The fault run's checks find what they look for: a duplicated attempt, a lost event.

:mod:`faults` passes when nothing went wrong; these feed its checks a made-up run where
something did, so a check that could never fail would show here.
"""

from __future__ import annotations

from pathlib import Path

from faults import FINISHED, Figures, Kill, Scenario
from sse import Followed, Frame

from agentrt.queues import StageRecord, StageState

JOB = "job1"


def _scenario(tmp_path: Path) -> Scenario:
    s = Scenario(tmp_path, "http://127.0.0.1:9/v1", jobs=1, max_jobs=1)
    s.jobs = [JOB]
    return s


def _started(worker: str, at_ms: int, stage: str = "reproduction") -> tuple[str, dict[str, object]]:
    return f"{at_ms}-0", {"kind": "stage_started", "stage": stage, "worker": worker}


def _record(attempts: int, queued: float, finished: float) -> dict[tuple[str, str], StageRecord]:
    r = StageRecord(
        JOB, "reproduction", JOB, StageState.DONE, attempts, queued_at=queued, finished_at=finished
    )
    return {(JOB, "reproduction"): r}


def test_an_attempt_no_kill_cut_short_is_a_duplicate(tmp_path: Path) -> None:
    s = _scenario(tmp_path)
    s.log[JOB] = [_started("h:1", 10_000), _started("h:2", 12_000)]
    f = Figures()
    s._check_attempts(f, _record(2, queued=9.0, finished=20.0))
    assert f.duplicated >= 1 and f.problems  # two whole attempts, no kill to explain them


def test_an_attempt_a_kill_cut_short_is_redone_not_duplicated(tmp_path: Path) -> None:
    s = _scenario(tmp_path)
    s.log[JOB] = [_started("h:1", 10_000), _started("h:2", 16_000)]
    s.kills = [Kill("reproduction", JOB, "h:1", "sandbox-worker", 11.0)]
    f = Figures()
    s._check_attempts(f, _record(2, queued=9.0, finished=20.0))
    assert (f.duplicated, f.redone, f.sandbox_runs_redone, f.problems) == (0, 1, 1, [])


def test_an_attempt_started_after_the_effect_is_a_duplicate(tmp_path: Path) -> None:
    s = _scenario(tmp_path)
    s.log[JOB] = [_started("h:1", 10_000), _started("h:2", 25_000)]
    f = Figures()
    s._check_attempts(f, _record(1, queued=9.0, finished=20.0))
    assert f.duplicated == 1


def test_an_event_missing_from_the_stream_is_lost(tmp_path: Path) -> None:
    s = _scenario(tmp_path)
    events = [
        {"kind": "note", "stage": "run", "message": str(i), "worker": "h:1"} for i in range(3)
    ]
    s.log[JOB] = [(f"{i}-0", e) for i, e in enumerate(events)]
    s.log[JOB].append(("9-0", {"kind": FINISHED, "stage": "run"}))
    seen = Followed(frames=[Frame(1, "note", events[0]), Frame(3, "note", events[2])])
    f = Figures()
    s._check_events(f, {JOB: seen})
    assert f.events_lost == 1
    whole = Followed(frames=[Frame(i + 1, "note", e) for i, e in enumerate(events)])
    f = Figures()
    s._check_events(f, {JOB: whole})
    assert (f.events_lost, f.problems) == (0, [])
