"""The fault run's checks find what they look for: a duplicated attempt, a lost event.

:mod:`faults` passes when nothing went wrong; these feed :mod:`faultchecks` a made-up run
where something did, so a check that could never fail would show here.
"""

from __future__ import annotations

from faultchecks import (
    Figures,
    Kill,
    ModelLife,
    Seen,
    check_attempts,
    check_events,
    check_model_requests,
)
from sse import Followed, Frame

from agentrt.queues import StageRecord, StageState
from fixbugs.queued.event_log import FINISHED

JOB = "job1"


def _started(worker: str, at_ms: int, stage: str = "reproduction") -> tuple[str, dict[str, str]]:
    return f"{at_ms}-0", {"kind": "stage_started", "stage": stage, "worker": worker}


def _records(
    attempts: int, queued: float, finished: float, stage: str = "reproduction"
) -> dict[tuple[str, str], StageRecord]:
    r = StageRecord(JOB, stage, JOB, StageState.DONE, attempts, queued, finished_at=finished)
    return {(JOB, stage): r}


def _seen(*log: tuple[str, dict[str, str]], kills: list[Kill] | None = None) -> Seen:
    seen = Seen(jobs=[JOB], kills=kills or [])
    seen.log[JOB] = list(log)
    return seen


def test_an_attempt_no_kill_cut_short_is_a_duplicate() -> None:
    seen = _seen(_started("h:1", 10_000), _started("h:2", 12_000))
    f = Figures()
    check_attempts(f, seen, _records(2, queued=9.0, finished=20.0))
    assert f.duplicated >= 1 and f.problems  # two whole attempts, no kill to explain them


def test_an_attempt_a_kill_cut_short_is_redone_not_duplicated() -> None:
    kill = Kill("reproduction", JOB, "h:1", "sandbox-worker", 11.0)
    seen = _seen(_started("h:1", 10_000), _started("h:2", 16_000), kills=[kill])
    f = Figures()
    check_attempts(f, seen, _records(2, queued=9.0, finished=20.0))
    assert (f.duplicated, f.redone, f.sandbox_runs_redone, f.problems) == (0, 1, 1, [])


def test_an_attempt_started_after_the_effect_is_a_duplicate() -> None:
    seen = _seen(_started("h:1", 10_000), _started("h:2", 25_000))
    f = Figures()
    check_attempts(f, seen, _records(1, queued=9.0, finished=20.0))
    assert f.duplicated == 1


def test_model_requests_beyond_the_recorded_effects_of_a_live_worker_are_duplicates() -> None:
    seen = _seen()
    seen.model_lives = [ModelLife("h:1", 5.0, 0, 9)]
    rec = _records(1, queued=9.0, finished=20.0, stage="analysis")
    f = Figures()
    check_model_requests(f, seen, rec, {(JOB, "analysis"): 7})
    assert f.duplicated == 2 and f.problems
    f = Figures()
    check_model_requests(f, seen, rec, {(JOB, "analysis"): 9})
    assert (f.duplicated, f.model_requests, f.problems) == (0, 9, [])
    # the same two extra requests from a worker killed before the effect: redone
    seen.kills = [Kill("analysis", JOB, "h:1", "model-worker", 15.0)]
    seen.model_lives = [ModelLife("h:1", 5.0, 0, 2), ModelLife("h:2", 16.0, 2, 9)]
    f = Figures()
    check_model_requests(f, seen, rec, {(JOB, "analysis"): 7})
    assert (f.duplicated, f.model_requests_redone, f.problems) == (0, 2, [])


def test_an_event_missing_from_the_stream_is_lost() -> None:
    events = [{"kind": "note", "stage": "run", "message": str(i)} for i in range(3)]
    seen = _seen(*((f"{i}-0", e) for i, e in enumerate(events)))
    seen.log[JOB].append(("9-0", {"kind": FINISHED, "stage": "run"}))
    f = Figures()
    check_events(f, seen, {JOB: Followed(frames=[Frame(1, "note", events[0])])})
    assert f.events_lost == 2
    whole = Followed(frames=[Frame(i + 1, "note", e) for i, e in enumerate(events)])
    f = Figures()
    check_events(f, seen, {JOB: whole})
    assert (f.events_lost, f.problems) == (0, [])
    backwards = Followed(frames=[Frame(i + 1, "note", e) for i, e in enumerate(events[::-1])])
    f = Figures()
    check_events(f, seen, {JOB: backwards})
    assert f.events_lost == 0 and f.problems  # all there, out of order
