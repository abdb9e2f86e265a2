"""The fault run's invariants, checked on what a run saw (:class:`Seen`).

Our reading of "no stage's effect happens twice": a stage attempt whose effect was
recorded is never run again (no model call or sandbox run of that (job, stage) after its
effect is recorded), each (job, stage) effect is recorded exactly once, and the work
redone is only that of attempts a kill cut short. It is counted three ways:

- the queue's records: one effect per (job, stage), and each delivery past a (job,
  stage)'s first follows a kill of a worker of the service serving that stage while the
  stage waited for its effect;
- the event log: every attempt's ``stage_started``, tagged with its worker (host:pid).
  Besides the attempt that recorded the effect, an attempt counts only if a kill cut it
  before the effect was recorded; none may start after. Sandbox runs are counted so;
- the model endpoint's request counter, read when each model worker process started and
  ended (one runs at a time): the requests a process sent less the model requests that
  the effects it recorded carry (their call records, retries included) are 0 for a
  process that was not killed, and the cut attempts' requests for one that was.

Work a kill cut short is "redone"; anything else is "duplicated", which must be 0. The
checks are plain functions of data, so :mod:`test_fault_checks` can show each one fail.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sse import Followed

from agentrt.queues import StageRecord
from fixbugs.queued.event_log import FINISHED
from fixbugs.queued.state import decode

QUEUE_STAGES = ("analysis", "reproduction", "root_cause", "repair")
# the agent's stages each queue stage runs: its attempt starts with the first
AGENT_STAGES = {
    "analysis": ("analysis", "file_relevance"),
    "reproduction": ("reproduction",),
    "root_cause": ("root_cause", "fix"),
    "repair": ("validation",),
}
FIRST = {q: a[0] for q, a in AGENT_STAGES.items()}
MODEL = ("analysis", "root_cause")
SERVICE = {"analysis": "model-worker", "root_cause": "model-worker"}
SERVICE |= {"reproduction": "sandbox-worker", "repair": "sandbox-worker"}

Records = Mapping[tuple[str, str], StageRecord]  # (job, stage) -> the queue's record


@dataclass(frozen=True, slots=True)
class Kill:
    stage: str  # the queue stage the worker was seen starting
    job: str
    worker: str  # host:pid
    service: str
    at: float  # epoch seconds, just before the signal


@dataclass
class ModelLife:
    """One model worker process, with the endpoint's request count at its start and end."""

    worker: str  # host:pid
    started_at: float  # epoch seconds
    requests_before: int
    requests_after: int | None = None


@dataclass
class Seen:
    """What a run saw: its jobs, their event logs, its kills, its model worker processes."""

    jobs: list[str] = field(default_factory=list)
    log: dict[str, list[tuple[str, dict[str, Any]]]] = field(
        default_factory=lambda: defaultdict(list)
    )  # job -> (stream position, event), as Redis holds them
    kills: list[Kill] = field(default_factory=list)
    model_lives: list[ModelLife] = field(default_factory=list)


@dataclass
class Figures:
    """One run's figures; ``problems`` lists what broke an invariant (empty: all held)."""

    jobs: int = 0
    kills: int = 0
    kills_in_stage: int = 0  # kills that came while the worker was in the stage
    redis_restarts: int = 0
    api_restarts: int = 0
    redone: int = 0  # deliveries past a (job, stage)'s first: attempts a kill cut short
    duplicated: int = 0  # must be 0
    events_lost: int = 0  # must be 0
    done: int = 0
    failed: dict[str, str] = field(default_factory=dict)  # job -> its reason
    model_requests: int = 0
    model_requests_redone: int = 0
    sandbox_runs: int = 0
    sandbox_runs_redone: int = 0
    wall_s: float = 0.0
    problems: list[str] = field(default_factory=list)

    def line(self) -> str:
        failed = f"{len(self.failed)} ({'; '.join(self.failed.values())})" if self.failed else "0"
        return (
            f"jobs {self.jobs} (done {self.done}, failed {failed}),"
            f" kills {self.kills} ({self.kills_in_stage} mid-stage),"
            f" redis restarts {self.redis_restarts}, API restarts {self.api_restarts},"
            f" redone attempts {self.redone}, duplicated effects {self.duplicated},"
            f" events lost {self.events_lost};"
            f" model requests {self.model_requests} ({self.model_requests_redone} redone),"
            f" sandbox runs {self.sandbox_runs} ({self.sandbox_runs_redone} redone);"
            f" {self.wall_s:.0f} s"
        )


@dataclass(frozen=True, slots=True)
class Attempt:
    """A stage attempt as the event log shows it: who started it, and when."""

    worker: str
    at: float  # the log's time of its stage_started (Redis server ms)


def stream_time(pos: str) -> float:
    """Epoch seconds of a Redis stream position (``<ms>-<seq>``)."""
    return int(pos.split("-")[0]) / 1000.0


def check_jobs(
    f: Figures, statuses: Sequence[Mapping[str, Any]], streams: Mapping[str, Followed]
) -> None:
    """Every job done with a validated report, or failed with its reason; its stream
    ended with its state."""
    for st in statuses:
        job = st["id"]
        if st["state"] == "done":
            if (st.get("report") or {}).get("validated") is not True:
                f.problems.append(f"{job}: done without a validated report")
            f.done += 1
        elif st["state"] in ("dead", "failed") and st.get("error"):
            f.failed[job] = str(st["error"])
        else:
            f.problems.append(f"{job}: neither finished nor failed with a reason: {st}")
        if streams[job].ended != st["state"]:
            f.problems.append(f"{job}: stream ended {streams[job].ended!r}, state {st['state']}")


def check_kills(f: Figures, seen: Seen, rec: Records) -> None:
    """Each kill came while its worker was in the stage: it had started the stage's
    attempt, had not finished it, and the stage's effect was not yet recorded."""
    for k in seen.kills:
        last = AGENT_STAGES[k.stage][-1]
        started = finished = False
        for pos, ev in seen.log[k.job]:
            if ev.get("worker") != k.worker or stream_time(pos) > k.at:
                continue
            started |= ev["kind"] == "stage_started" and ev["stage"] == FIRST[k.stage]
            finished |= ev["kind"] == "stage_finished" and ev["stage"] == last
        r = rec.get((k.job, k.stage))
        recorded = r.finished_at if r is not None and r.finished_at is not None else 0.0
        if started and not finished and recorded > k.at:
            f.kills_in_stage += 1
        else:
            f.problems.append(
                f"the kill in {k.stage} of {k.job} came when its worker was not in it"
                f" (started {started}, finished {finished}, recorded at {recorded},"
                f" killed at {k.at})"
            )


def check_effects(f: Figures, seen: Seen, effects: Sequence[tuple[str, str]]) -> None:
    """One recorded effect per (job, stage), all four for a job that did not fail."""
    mine = [e for e in effects if e[0] in seen.jobs]
    twice = len(mine) - len(set(mine))
    if twice:
        f.duplicated += twice
        f.problems.append(f"effects recorded twice: {twice}")
    for job in seen.jobs:
        missing = [s for s in QUEUE_STAGES if (job, s) not in set(mine)]
        if missing and job not in f.failed:
            f.problems.append(f"{job}: no effect for {missing}")


def _attempts(seen: Seen, job: str) -> dict[str, list[Attempt]]:
    out: dict[str, list[Attempt]] = defaultdict(list)
    for pos, ev in seen.log[job]:
        stage = next((q for q, first in FIRST.items() if first == ev["stage"]), None)
        if ev["kind"] == "stage_started" and stage is not None:
            out[stage].append(Attempt(ev["worker"], stream_time(pos)))
    return out


def check_attempts(f: Figures, seen: Seen, rec: Records) -> None:
    """Per (job, stage): the attempts the log shows, and the queue's deliveries, are one
    plus those a kill cut short before the effect was recorded."""
    killed = {k.worker: k.at for k in seen.kills}
    for job in seen.jobs:
        attempts = _attempts(seen, job)
        for stage in QUEUE_STAGES:
            r = rec.get((job, stage))
            if r is None:
                continue
            recorded = r.finished_at if r.finished_at is not None else float("inf")
            runs = attempts[stage]
            cut = [a for a in runs if a.at <= killed.get(a.worker, -1.0) <= recorded]
            whole = [a for a in runs if a not in cut]
            after = [a for a in runs if a.at > recorded]
            if stage not in MODEL:
                f.sandbox_runs += len(runs)
                f.sandbox_runs_redone += len(cut)
            if len(whole) > 1 or after:
                f.duplicated += max(len(whole) - 1, len(after))
                f.problems.append(
                    f"{job} {stage}: attempts no kill cut {[(a.worker, a.at) for a in whole]},"
                    f" {len(after)} started after its effect ({recorded})"
                )
            extra = r.attempts - 1
            since = r.queued_at if r.queued_at is not None else 0.0
            explained = sum(
                1 for k in seen.kills if k.service == SERVICE[stage] and since <= k.at <= recorded
            )
            f.redone += extra
            if extra > explained:
                f.duplicated += extra - explained
                f.problems.append(
                    f"{job} {stage}: {r.attempts} deliveries, {explained} kill(s) to explain them"
                )


def carried_requests(results: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], int]:
    """(job, model stage) -> the model requests its recorded effect carries (the stage's
    call records' attempts: retries included)."""
    out: dict[tuple[str, str], int] = {}
    for job, res in results.items():
        before = 0
        for stage in QUEUE_STAGES[:3]:  # the repair's effect is the report
            if stage not in res:
                break
            total = sum(r.attempts for r in decode(res[stage]).records if r.kind == "model")
            if stage in MODEL:
                out[(job, stage)] = total - before
            before = total
    return out


def check_model_requests(
    f: Figures, seen: Seen, rec: Records, carried: Mapping[tuple[str, str], int]
) -> None:
    """Per model worker process: the requests the endpoint counted while it lived are
    those its recorded effects carry, plus, for a killed process only, its cut attempts'."""
    killed = {k.worker: k.at for k in seen.kills}
    for life in seen.model_lives:
        assert life.requests_after is not None
        sent = life.requests_after - life.requests_before
        f.model_requests += sent
        end = killed.get(life.worker, float("inf"))
        mine = 0
        for (job, stage), n in carried.items():
            r = rec.get((job, stage))
            if r is not None and r.finished_at is not None:
                mine += n if life.started_at <= r.finished_at <= end else 0
        residual = sent - mine
        if life.worker in killed and residual >= 0:
            f.model_requests_redone += residual
        elif residual != 0:
            f.duplicated += max(residual, 0)
            f.problems.append(
                f"model worker {life.worker}: {sent} requests served, {mine} in its effects"
            )


def check_events(f: Figures, seen: Seen, streams: Mapping[str, Followed]) -> None:
    """Each job's SSE stream holds its event log (less the end marker), in order, once."""

    def key(ev: Mapping[str, Any]) -> str:  # a failure's message is redacted over SSE
        return json.dumps(
            {k: v for k, v in ev.items() if not (ev["kind"] == "failed" and k == "message")},
            sort_keys=True,
        )

    for job in seen.jobs:
        logged = [key(ev) for _, ev in seen.log[job] if ev["kind"] != FINISHED]
        got = streams[job].events
        ids = [e.id for e in got]
        if len(set(ids)) != len(ids):
            f.problems.append(f"{job}: an event id came twice over SSE")
        streamed = [key(e.data) for e in got]
        lost = sum((Counter(logged) - Counter(streamed)).values())
        if lost:
            f.events_lost += lost
            f.problems.append(
                f"{job}: SSE gave {len(streamed)} events over {streams[job].connections}"
                f" connection(s); the log holds {len(logged)} ({lost} lost)"
            )
        elif streamed != logged:
            f.problems.append(f"{job}: SSE gave the log's events out of order or twice")
