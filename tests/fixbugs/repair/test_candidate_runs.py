"""Parallel staged validation: stage order, early stop, honesty, and clean cancellation."""

from __future__ import annotations

import asyncio
import os
import secrets
import sys
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentrt import FakeClock
from fixbugs.repair.candidate_runs import Stage, validate_parallel
from fixbugs.repair.ranking import RepairCandidate
from fixbugs.repair.shapes import ChangeShape
from fixbugs.sandbox import Sandbox, interpreter_paths

PASS = (
    "tests/test_m.py::test_a PASSED\ntests/test_m.py::test_b PASSED\n"
    "==== 2 passed in 0.01 seconds ====\n"
)
FAIL = (
    "tests/test_m.py::test_a FAILED\ntests/test_m.py::test_b PASSED\n"
    "==== 1 failed, 1 passed in 0.01 seconds ====\n"
)
COLLECT = (
    "==== ERRORS ====\n_ ERROR collecting tests/test_m.py _\nE   SyntaxError\n"
    "!!!! Interrupted: 1 errors during collection !!!!\n==== 1 error in 0.05 seconds ====\n"
)


def cand(i: int, diff: str, risk: str = "low") -> RepairCandidate:
    return RepairCandidate(
        i,
        "m.py",
        diff,
        "",
        "operator",
        f"cand {i}",
        1,
        1,
        1.0,
        0.5,
        1.0,
        2,
        risk,  # type: ignore[arg-type]
    )


@dataclass
class Res:
    returncode: int
    stdout: str
    stderr: str = ""
    timed_out: bool = False


@dataclass
class FakeBox:
    """A sandbox stand-in: records its patch; ``closed`` tells the test it was cleaned up."""

    registry: list[FakeBox]
    diff: str = ""
    closed: bool = False
    ran: list[str] = field(default_factory=list)

    def apply_patch(self, diff: str):
        self.diff = diff

        class R:
            applied = diff != "bad"
            message = "does not apply"

        return R()

    def close(self) -> None:
        self.closed = True


def harness(behaviour):
    boxes: list[FakeBox] = []

    def make_fork() -> FakeBox:
        b = FakeBox(boxes)
        boxes.append(b)
        return b

    async def run(sb: FakeBox, cmd: str, what: str, timeout_s: float) -> Res:
        sb.ran.append(cmd)
        await asyncio.sleep(0)
        return behaviour(sb.diff, cmd)

    return boxes, make_fork, run


STAGES = [
    Stage("failing", "python -m pytest tests/test_m.py::test_a"),
    Stage("suite", "python -m pytest -v tests", None, lazy_baseline=True),
]


def validate(
    cands: list[Any],
    make_fork: Any,
    run: Any,
    *,
    stages: Any = STAGES[:1],
    clock: FakeClock | None = None,
    budget_s: float = 100,
    limit: int = 1,
    refine: Any = None,
) -> Any:
    """``validate_parallel`` with these tests' usual stages, clock and budget."""
    return validate_parallel(
        cands,
        make_fork=make_fork,
        run=run,
        stages=stages,
        clock=clock or FakeClock(),
        budget_s=budget_s,
        limit=limit,
        refine=refine,
    )


def behaviour(diff: str, cmd: str) -> Res:
    if diff == "":  # the baseline run on a pristine fork
        return Res(1, FAIL)
    if diff == "fix":
        return Res(0, PASS)
    if diff == "breaks-suite":
        return (
            Res(0, PASS)
            if "::" in cmd
            else Res(1, "tests/test_m.py::test_b FAILED\n==== 1 failed in 0.1 seconds ====\n")
        )
    if diff == "no-collect":
        return Res(2, COLLECT)
    return Res(1, FAIL)


async def test_stages_in_order_and_each_rejection_recorded():
    boxes, make_fork, run = harness(behaviour)
    cands = [
        cand(0, "nofix"),
        cand(1, "bad"),
        cand(2, "no-collect"),
        cand(3, "breaks-suite"),
        cand(4, "fix"),
    ]
    out = await validate(cands, make_fork, run, stages=STAGES)
    assert [c.id for c in out.validated] == [4]
    assert out.outcomes[0].stage == "failing"
    assert out.outcomes[1].status == "did_not_apply"
    # a candidate after which the tests cannot even be collected has not passed
    assert out.outcomes[2].status == "rejected" and out.outcomes[2].stage == "failing"
    assert out.outcomes[3].stage == "suite"
    assert out.rejected_by_stage() == {"failing": 2, "apply": 1, "suite": 1}
    assert all(b.closed for b in boxes)


async def test_first_low_risk_pass_cancels_the_rest_and_closes_every_fork():
    gate = asyncio.Event()
    boxes, make_fork, run0 = harness(behaviour)

    async def run(sb, cmd, what, timeout_s):
        if sb.diff == "slow":
            await gate.wait()  # never set: only cancellation ends these
        return await run0(sb, cmd, what, timeout_s)

    cands = [cand(0, "nofix"), cand(1, "fix"), cand(2, "slow"), cand(3, "slow"), cand(4, "fix")]
    out = await validate(cands, make_fork, run, limit=2)
    # the best-ranked passing candidate, as a sequential run would find it
    assert [c.id for c in out.validated] == [1]
    assert out.outcomes[0].status == "rejected"
    assert out.outcomes.get(2) is None or out.outcomes[2].status in ("cancelled", "skipped")
    assert 4 not in out.outcomes or out.outcomes[4].status != "validated"
    assert boxes and all(b.closed for b in boxes)


async def test_a_later_candidate_passing_first_waits_for_better_ranked_ones():
    release = asyncio.Event()
    _boxes, make_fork, run0 = harness(behaviour)

    async def run(sb, cmd, what, timeout_s):
        if sb.diff == "fix-slow":
            await release.wait()
        res = await run0(sb, cmd, what, timeout_s)
        if sb.diff == "fix":
            release.set()  # the better-ranked candidate finishes only after this one
        return res

    def slow_behaviour(diff: str, cmd: str) -> Res:
        return behaviour("fix" if diff == "fix-slow" else diff, cmd)

    _b, _m, run0 = harness(slow_behaviour)
    cands = [cand(0, "fix-slow"), cand(1, "fix")]
    out = await validate(cands, make_fork, run, limit=2)
    assert out.validated[0].id == 0


async def test_high_risk_pass_keeps_searching_for_a_lower_risk_fix():
    _boxes, make_fork, run = harness(behaviour)
    cands = [cand(0, "fix", risk="high"), cand(1, "nofix"), cand(2, "fix")]
    # "fix" twice: distinct objects, same behaviour
    out = await validate(cands, make_fork, run)
    assert [c.id for c in out.validated] == [0, 2]


async def test_a_pass_with_an_overfitting_shape_keeps_searching_and_goes_last():
    """Whatever its risk says, a change that swallows the error never ends the search."""
    _boxes, make_fork, run = harness(behaviour)
    swallow = replace(cand(0, "fix"), shape=ChangeShape("swallows", "wraps line 1 in try/except"))
    assert swallow.overfit_risk == "low" and not swallow.ends_search
    cands = [swallow, cand(1, "fix", risk="high"), cand(2, "nofix"), cand(3, "fix"), cand(4, "fix")]
    out = await validate(cands, make_fork, run)
    # the search ends at the first pass without a shape or a high risk (3), not at 0;
    # the shaped pass is listed after every other validated candidate
    assert [c.id for c in out.validated] == [1, 3, 0]
    assert 4 not in out.outcomes or out.outcomes[4].status != "validated"


async def test_budget_spent_skips_the_rest():
    clock = FakeClock()
    _boxes, make_fork, run0 = harness(behaviour)

    async def run(sb, cmd, what, timeout_s):
        clock.advance(60)
        return await run0(sb, cmd, what, timeout_s)

    cands = [cand(i, "nofix") for i in range(4)]
    out = await validate(cands, make_fork, run, clock=clock)
    assert out.budget_spent
    assert [o.status for o in out.outcomes.values()].count("skipped") == 2


def _marker_processes(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


async def _ready(fifo: Path, proc: asyncio.Future) -> None:
    """Return once the command wrote to ``fifo`` (it runs), or ended without doing so.

    The FIFO is read without blocking, through the event loop (no thread
    left blocked on it when the test cancels), and Linux reports no end of
    file on it before a writer has opened it.
    """
    loop = asyncio.get_running_loop()
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    readable = loop.create_future()
    loop.add_reader(fd, lambda: readable.done() or readable.set_result(None))
    try:
        await asyncio.wait({readable, proc}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        loop.remove_reader(fd)
        os.close(fd)
        readable.cancel()


@pytest.mark.parametrize("cancel_when", ["first_running", "all_running"])
async def test_cancelling_the_repair_stage_leaves_no_sandbox_and_no_process(tmp_path, cancel_when):
    # "first_running": the others may still be forking or applying their patch
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "m.py").write_text("x = 1\n")
    base = tmp_path / "sandboxes"
    base.mkdir()
    py = sys.executable
    pristine = Sandbox.create(repo, base_dir=base, readonly_paths=interpreter_paths(Path(py)))
    marker = f"fixbugs-cancel-{secrets.token_hex(6)}"
    running = 0
    target = 1 if cancel_when == "first_running" else 2  # limit=2: at most two test processes
    ready = asyncio.Event()

    async def run(sb, cmd, what, timeout_s):
        nonlocal running
        fifo = sb.root / f"ready-{secrets.token_hex(4)}"
        os.mkfifo(fifo)
        os.chmod(fifo, 0o666)  # the sandbox may run as another uid
        code = f"open({fifo.name!r}, 'w').write('x'); import time; time.sleep(120)"
        proc = asyncio.ensure_future(sb.run([py, "-c", code, marker], timeout_s=timeout_s))
        try:
            await _ready(fifo, proc)
            if not proc.done():
                running += 1
                if running >= target:
                    ready.set()
            return await proc
        finally:
            # the run is this call's own task: a cancel must reach it too
            if not proc.done():
                proc.cancel()
                await asyncio.wait({proc})

    diff = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    cands = [cand(i, diff) for i in range(4)]
    task = asyncio.create_task(
        # the suite baseline is prefetched in a fork too
        validate(cands, pristine.fork, run, stages=STAGES, budget_s=1000, limit=2)
    )
    waiter = asyncio.ensure_future(ready.wait())
    await asyncio.wait({waiter, task}, return_when=asyncio.FIRST_COMPLETED)
    assert ready.is_set() and not task.done(), "the candidates' test commands never ran"
    assert _marker_processes(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    pristine.close()
    assert _marker_processes(marker) == []
    assert os.listdir(base) == []


async def test_a_cancel_while_a_patch_is_applied_waits_for_it_before_deleting_the_fork():
    # The patch is applied in a thread, which a cancel cannot stop: deleting
    # the fork under it would let it write into a half-deleted copy.
    applying, release = threading.Event(), threading.Event()
    order: list[str] = []

    class Box:
        def apply_patch(self, diff):
            applying.set()
            release.wait(60)
            order.append("applied")
            return SimpleNamespace(applied=True, message="")

        def close(self):
            order.append("closed")

    async def run(sb, cmd, what, timeout_s):
        raise AssertionError("a cancelled candidate must not run its tests")

    task = asyncio.create_task(validate([cand(0, "diff")], Box, run))
    await asyncio.to_thread(applying.wait, 60)
    task.cancel()
    # Give a wrong implementation every chance to close the fork under the
    # running patch (thread round trips, not sleeps), then let the patch end.
    try:
        for _ in range(20):
            await asyncio.to_thread(lambda: None)
        assert order == [] and not task.done()
    finally:
        release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert order == ["applied", "closed"]


SHARD_A = "python -m pytest -v tests/test_a.py"
SHARD_B = "python -m pytest -v tests/test_b.py"
SHARDED = [
    Stage("failing", "python -m pytest tests/test_a.py::test_1"),
    Stage("suite", "python -m pytest -v tests", None, True, (SHARD_A, SHARD_B)),
]


def sharded_behaviour(diff: str, cmd: str) -> Res:
    """Two test files; the ``breaks-b`` candidate breaks a test only shard B runs."""
    if cmd.endswith("::test_1"):
        return Res(0 if diff else 1, "tests/test_a.py::test_1 PASSED\n" if diff else FAIL)
    a = "tests/test_a.py::test_1 PASSED\ntests/test_a.py::test_2 PASSED\n"
    b_ok = "tests/test_b.py::test_3 PASSED\n"
    b = "tests/test_b.py::test_3 FAILED\n" if diff == "breaks-b" else b_ok
    if cmd == SHARD_A:
        return Res(0, a)
    if cmd == SHARD_B:
        return Res(1 if "FAILED" in b else 0, b)
    return Res(1 if "FAILED" in b else 0, a + b)  # the whole folder in one run


@pytest.mark.parametrize("limit", [1, 2])
async def test_a_sharded_suite_is_judged_as_one_run(limit):
    boxes, make_fork, run = harness(sharded_behaviour)
    cands = [cand(0, "breaks-b"), cand(1, "fix")]
    out = await validate(cands, make_fork, run, stages=SHARDED, limit=limit)
    # the regression that only shard B sees rejects the candidate; the fix passes
    assert out.outcomes[0].status == "rejected" and out.outcomes[0].stage == "suite"
    assert [c.id for c in out.validated] == [1]
    commands = [cmd for b in boxes for cmd in b.ran]
    if limit == 1:  # one core: nothing to split, the folder runs whole
        assert SHARD_A not in commands and "python -m pytest -v tests" in commands
    else:  # baseline and candidates run both shards, each shard in a fork with the patch
        assert "python -m pytest -v tests" not in commands
        assert commands.count(SHARD_B) == 3  # the baseline and both candidates
        # shard B ran in a pristine fork (the baseline) and in forks holding each patch
        assert sorted(b.diff for b in boxes if SHARD_B in b.ran) == ["", "breaks-b", "fix"]
    assert all(b.closed for b in boxes)


async def test_a_candidate_past_the_failing_tests_finishes_after_the_budget():
    # the failing tests pass before the deadline; the suite stage starts after it and
    # still runs (with the test timeout), so the fix is not lost to a long suite
    clock = FakeClock()
    _boxes, make_fork, run0 = harness(behaviour)
    limits: list[tuple[str, float]] = []

    async def run(sb, cmd, what, timeout_s):
        limits.append((what, timeout_s))
        clock.advance(60)
        return await run0(sb, cmd, what, timeout_s)

    out = await validate([cand(0, "fix")], make_fork, run, stages=STAGES, clock=clock, budget_s=50)
    assert [c.id for c in out.validated] == [0]
    suite = [t for what, t in limits if what.startswith("suite tests on candidate")]
    assert suite == [120.0]  # validate_parallel's default test timeout, not the spent budget


async def test_a_stage_with_its_own_timeout_runs_with_it_and_so_does_its_baseline():
    # a whole suite takes minutes where the failing test takes seconds
    _boxes, make_fork, run0 = harness(behaviour)
    limits: list[tuple[str, float]] = []

    async def run(sb, cmd, what, timeout_s):
        limits.append((what, timeout_s))
        return await run0(sb, cmd, what, timeout_s)

    stages = [STAGES[0], replace(STAGES[1], timeout_s=900.0)]
    out = await validate([cand(0, "fix")], make_fork, run, stages=stages, budget_s=50)
    assert [c.id for c in out.validated] == [0]
    assert dict(limits) == {
        "failing tests on candidate 0": 50.0,  # within the budget left
        "suite baseline": 900.0,
        "suite tests on candidate 0": 900.0,
    }
