"""Parallel, staged validation of ranked candidates in sandbox forks.

Validation is embarrassingly parallel, so candidates run through agentrt's
scatter-gather with a concurrency limit sized to the cores: each worker
forks a fresh copy of the *pristine* tree (a copy no test ever ran in),
applies one candidate and runs its stages, cheapest and most telling first:

1. ``failing``: the failing tests must now run and pass (a run that cannot
   even collect the tests has *not* passed: :func:`classify_run`);
2. ``module``: every test of the changed module's test files that passed
   before still passes;
3. ``suite``: every test of the whole test folder that passed before still
   passes (its baseline is taken once, on a pristine fork, on first need).

Test processes take :class:`~fixbugs.repair.slots.PrioritySlots`, one per
core, best rank first; with more than one core a stage with ``shards`` (the
whole suite split by test file) runs them side by side in forks of their
own, so the likely fix in its longest stage gets every core.

The budget bounds the search: no candidate starts after it, but one that has
passed the failing tests finishes its later stages (a suite on a large
project takes minutes, and the right fix must not be lost to it).

A candidate whose failing tests still fail may have moved the failure
forward (the test got further, another crash site): ``refine`` then
returns follow-ups built on it (:mod:`fixbugs.repair.followup`), which join
the queue of candidates not yet taken (:class:`~fixbugs.repair.schedule.CandidateQueue`).

The first candidate to pass every stage stops the search unless it is a
high overfitting risk or it fails a check (its change swallows the
exception, negates a whole condition, returns a constant:
:mod:`fixbugs.repair.shapes`; or another demoting shape,
:mod:`fixbugs.repair.demotions`, judged once it passed); then the search
goes on for a lower-risk one while the budget lasts, and such a candidate
is listed after every other validated one; leaving the scatter cancels the candidates in flight, and
each one's fork is closed — processes killed, directory removed — before the
cancellation finishes.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from agentrt import Clock
from agentrt.graph import first_error, scatter
from fixbugs.repair.gates import (
    Baselines,
    Ran,
    Runner,
    Stage,
    close,
    fork,
    in_thread,
    joint,
    stage_verdict,
    still_fails,
)
from fixbugs.repair.ranking import RepairCandidate
from fixbugs.repair.schedule import CandidateQueue, FollowUps
from fixbugs.repair.slots import PrioritySlots
from fixbugs.sandbox.executor import Workspace

__all__ = [
    "CandidateOutcome",
    "Stage",
    "ValidationRun",
    "default_limit",
    "validate_parallel",
]

Status = Literal["validated", "rejected", "did_not_apply", "skipped", "cancelled", "error"]

# (the candidate, its failing tests' output) -> follow-ups built on it, or None
Refiner = Callable[[RepairCandidate, str], FollowUps | None]


@dataclass(frozen=True, slots=True)
class CandidateOutcome:
    id: int
    status: Status
    stage: str | None  # the stage that rejected it (None when validated or never run)
    detail: str
    seconds: float
    finished_at: float  # seconds since validation started


@dataclass
class ValidationRun:
    outcomes: dict[int, CandidateOutcome] = field(default_factory=dict)
    # every candidate that passed every stage, those with an overfitting shape last
    validated: list[RepairCandidate] = field(default_factory=list)
    first_validated_s: float | None = None  # the first that passed with no overfitting shape
    wall_s: float = 0.0
    budget_spent: bool = False
    # follow-ups the refiner added while the search ran (their outcomes are in ``outcomes``)
    added: list[RepairCandidate] = field(default_factory=list)

    def rejected_by_stage(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for o in self.outcomes.values():
            if o.status == "rejected" and o.stage:
                out[o.stage] = out.get(o.stage, 0) + 1
            elif o.status == "did_not_apply":
                out["apply"] = out.get("apply", 0) + 1
        return out


def default_limit() -> int:
    """One candidate per core: each validation is one test process at a time."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


async def validate_parallel(
    candidates: Sequence[RepairCandidate],
    *,
    make_fork: Callable[[], Workspace],
    run: Runner,
    stages: Sequence[Stage] | Callable[[RepairCandidate], Sequence[Stage]],
    clock: Clock,
    budget_s: float,
    limit: int | None = None,
    test_timeout_s: float = 120.0,
    alternatives: int = 0,
    on_outcome: Callable[[RepairCandidate, CandidateOutcome], None] | None = None,
    refine: Refiner | None = None,
    judge: Callable[[RepairCandidate], RepairCandidate] | None = None,
) -> ValidationRun:
    """Validate ``candidates`` (best first) concurrently; stop at the first low-risk pass.

    ``alternatives`` more validated fixes are collected while the budget
    lasts. ``limit=1`` is the sequential baseline the benchmark compares with.
    ``refine`` sees each candidate whose failing tests ran and still failed;
    its follow-ups join the queue (their ids must be new). ``judge`` sees each
    candidate that passed every stage and returns it with the checks it fails
    (:func:`fixbugs.stages.lead.judge`): one with any does not end the search.
    """
    started = clock.now()
    deadline = started + budget_s
    run_state = ValidationRun()
    workers = limit or default_limit()
    # invariant: at most ``workers`` test processes at once, best rank first
    slots = PrioritySlots(workers)

    async def run_stage(
        stage: Stage, sb: Workspace, diff: str | None, priority: float, what: str, limit_s: float
    ) -> Ran:
        """Run ``stage`` in ``sb`` (``diff`` applied there); shards in forks of their own."""
        cmds = stage.shards if workers > 1 and len(stage.shards) > 1 else (stage.command,)
        if len(cmds) == 1:
            async with slots.hold(priority):
                return await run(sb, cmds[0], what, limit_s)

        async def shard(i: int, cmd: str) -> Ran:
            box = sb if i == 0 else await fork(make_fork)
            try:
                if i and diff is not None:
                    applied = await in_thread(functools.partial(box.apply_patch, diff))
                    if not applied.applied:
                        raise RuntimeError(
                            f"the patch did not apply in a shard's fork: {applied.message}"
                        )
                async with slots.hold(priority):
                    return await run(box, cmd, f"{what}, shard {i + 1}/{len(cmds)}", limit_s)
            finally:
                if i:
                    await close(box)

        try:
            async with asyncio.TaskGroup() as tg:
                tasks = [tg.create_task(shard(i, cmd)) for i, cmd in enumerate(cmds)]
        except BaseExceptionGroup as eg:
            raise first_error(eg) from None
        return joint([t.result() for t in tasks])

    baselines = Baselines(make_fork, run_stage, test_timeout_s)

    def record(
        c: RepairCandidate, status: Status, stage: str | None, detail: str, t0: float
    ) -> CandidateOutcome:
        now = clock.now()
        o = CandidateOutcome(c.id, status, stage, detail, now - t0, now - started)
        run_state.outcomes[c.id] = o
        if on_outcome is not None:
            on_outcome(c, o)
        return o

    best: list[int] = []  # order of the best validated candidate that ends the search
    queue: CandidateQueue[RepairCandidate] = CandidateQueue(candidates, ident=lambda c: c.id)
    order_of: dict[int, int] = {}  # candidate id -> the order it was taken in
    judged: dict[int, RepairCandidate] = {}  # id -> the candidate with its failed checks

    async def check(item: tuple[int, RepairCandidate]) -> CandidateOutcome:
        pos, c = item
        order_of[c.id] = pos
        t0 = clock.now()
        if best and pos > best[0] and alternatives == 0:
            return record(c, "skipped", None, "a better-ranked candidate validated", t0)
        if t0 >= deadline:
            run_state.budget_spent = True
            return record(c, "skipped", None, "repair budget spent", t0)
        try:
            sb = await fork(make_fork)
        except (OSError, RuntimeError) as exc:
            return record(c, "error", None, f"could not fork the sandbox: {exc}"[:200], t0)
        try:
            applied = await in_thread(functools.partial(sb.apply_patch, c.diff))
            if not applied.applied:
                return record(c, "did_not_apply", "apply", applied.message[:200], t0)
            for i, stage in enumerate(stages(c) if callable(stages) else stages):
                remaining = deadline - clock.now()
                # the budget bounds the search, not the check of a candidate that passed
                # the failing tests: its later stages finish, each within its own timeout
                if remaining <= 0 and i == 0:
                    run_state.budget_spent = True
                    return record(c, "skipped", stage.name, "repair budget spent", t0)
                own = stage.timeout_s or test_timeout_s
                limit_s = own if i else min(own, max(1.0, remaining))
                base = None
                if stage.baseline is not None or stage.lazy_baseline:
                    base = await baselines.get(stage, pos)
                what = f"{stage.name} tests on candidate {c.id}"
                res = await run_stage(stage, sb, c.diff, pos, what, limit_s)
                why = await stage_verdict(stage, res, base)
                if why is not None:
                    if (
                        i == 0
                        and refine is not None
                        and await asyncio.to_thread(still_fails, stage, res)
                    ):
                        out = res.stdout + "\n" + res.stderr
                        more = await in_thread(functools.partial(refine, c, out))
                        if more is not None:
                            # a follow-up may name a queued candidate again: added once
                            run_state.added.extend(queue.add(more.candidates, urgent=more.urgent))
                    return record(c, "rejected", stage.name, why, t0)
            if judge is not None:
                c = await in_thread(functools.partial(judge, c))
                judged[c.id] = c
            return record(c, "validated", None, "every stage passed", t0)
        except asyncio.CancelledError:
            record(c, "cancelled", None, "cancelled: another candidate validated", t0)
            raise
        except (OSError, RuntimeError) as exc:  # the sandbox failed, not the candidate
            return record(c, "error", None, f"validation could not run: {exc}"[:200], t0)
        finally:
            await close(sb)

    # Ordered early stop: the result is the first low-risk candidate in the queue's
    # order that passes, as a sequential run would find it; candidates taken after
    # it are cancelled, those taken before it still in flight are waited for.
    done: set[int] = set()
    # With room for more than one process, the lazily needed baselines (the
    # whole suite on the pristine tree) run beside the first candidates
    # instead of after the first one that reaches that stage.
    prefetch: list[asyncio.Task[Mapping[str, str]]] = []
    if workers > 1 and candidates:
        first = stages(candidates[0]) if callable(stages) else stages
        prefetch = [
            asyncio.create_task(baselines.get(st, -1.0)) for st in first if st.lazy_baseline
        ]
    try:
        await _drain(check, queue, workers, done, best, run_state, alternatives, judged)
    finally:
        for t in prefetch:
            t.cancel()
        await asyncio.gather(*prefetch, return_exceptions=True)
    # the queue's order, an overfitting shape after every other validated candidate
    run_state.validated.sort(key=lambda c: (c.looks_overfit, order_of[c.id]))
    run_state.wall_s = clock.now() - started
    return run_state


async def _drain(
    check: Callable[[tuple[int, RepairCandidate]], Awaitable[CandidateOutcome]],
    items: Iterable[tuple[int, RepairCandidate]],
    workers: int,
    done: set[int],
    best: list[int],
    run_state: ValidationRun,
    alternatives: int,
    judged: Mapping[int, RepairCandidate],
) -> None:
    """Consume outcomes until the best-ranked pass that ends the search is settled (see above)."""
    low_risk_found = 0
    async with scatter(check, items, limit=workers) as results:
        async for o in results:
            if o.error is not None:
                raise o.error
            outcome = o.value
            assert outcome is not None
            pos, cand = o.item
            cand = judged.get(cand.id, cand)
            done.add(pos)
            if outcome.status == "validated":
                run_state.validated.append(cand)
                # a pass that only hides the failure is no fix: it does not start this clock
                if run_state.first_validated_s is None and not cand.looks_overfit:
                    run_state.first_validated_s = outcome.finished_at
                if cand.ends_search:
                    low_risk_found += 1
                    if not best or pos < best[0]:
                        best[:] = [pos]
            if best and low_risk_found > alternatives and all(i in done for i in range(best[0])):
                break
