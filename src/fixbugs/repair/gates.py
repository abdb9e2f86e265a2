"""One validation gate: a stage's command run in a sandbox fork, and its verdict.

A stage is a command with what it must show (its named tests pass, or no
test that passed in its baseline fails); a candidate's forks are made and
closed through :func:`fork` and :func:`close`, which finish their thread's
work even when the search is cancelled, so no sandbox is left behind. The
search itself is :mod:`fixbugs.repair.candidate_runs`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from fixbugs.pyenv.testoutput import parse_outcomes
from fixbugs.pyenv.testrun import parse_test_command, regressions
from fixbugs.pyenv.testverdict import classify_run
from fixbugs.sandbox.executor import Workspace

__all__ = [
    "Baselines",
    "Joint",
    "Ran",
    "Runner",
    "Stage",
    "StageRunner",
    "close",
    "fork",
    "in_thread",
    "joint",
    "once",
    "stage_verdict",
    "still_fails",
]

T = TypeVar("T")


class Ran(Protocol):
    """What a test command's run leaves: one command's result, or its shards' joined."""

    @property
    def returncode(self) -> int: ...
    @property
    def stdout(self) -> str: ...
    @property
    def stderr(self) -> str: ...
    @property
    def timed_out(self) -> bool: ...


Runner = Callable[[Workspace, str, str, float], Awaitable[Ran]]  # (fork, cmd, what, timeout)


@dataclass(frozen=True, slots=True)
class Stage:
    """One gate: ``command`` run in the candidate's fork.

    With ``baseline is None`` the command's named tests must run and pass;
    otherwise no test that passed in ``baseline`` may fail (``baseline`` may
    be a coroutine factory, run once on a pristine fork at first need).
    """

    name: str
    command: str
    baseline: Mapping[str, str] | None = None
    lazy_baseline: bool = False
    # Commands that together run what ``command`` runs (the suite split by
    # test file): with more than one core, the stage and its baseline run
    # them side by side, each in its own fork, and judge their joint output.
    shards: tuple[str, ...] = ()
    # Seconds the stage's command (and its baseline) may run; None: the test timeout.
    # A project's whole suite takes minutes where one failing test takes seconds.
    timeout_s: float | None = None


async def in_thread(fn: Callable[[], T], undo: Callable[[T], None] | None = None) -> T:
    """Run ``fn`` in a thread and wait for it to end even if cancelled meanwhile.

    A thread cannot be stopped: returning at the cancel would let the caller
    delete a sandbox while the thread still copies into it or applies a
    patch inside it, and leave a directory behind. So the cancellation is
    held until the thread is done, ``undo`` (if given) is applied to what it
    made, and then the cancellation is raised.
    """
    task = asyncio.ensure_future(asyncio.to_thread(fn))
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        if undo is not None and not task.cancelled() and task.exception() is None:
            undo(task.result())
        raise asyncio.CancelledError
    return task.result()


def close_now(sb: Workspace) -> None:
    sb.close()


async def fork(make_fork: Callable[[], Workspace]) -> Workspace:
    """A new fork; if cancelled while copying, the finished copy is deleted."""
    return await in_thread(make_fork, undo=close_now)


async def close(sb: Workspace) -> None:
    """Close (kill, unmount, delete), finishing even if cancelled meanwhile."""
    await in_thread(sb.close)


StageRunner = Callable[[Stage, Workspace, "str | None", float, str, float], Awaitable[Ran]]


class Baselines:
    """Lazily computed baselines, one per stage, shared by every candidate."""

    def __init__(
        self, make_fork: Callable[[], Workspace], run_stage: StageRunner, timeout_s: float
    ) -> None:
        self._make_fork = make_fork
        self._run_stage = run_stage
        self._timeout = timeout_s
        self._lock = asyncio.Lock()
        self._done: dict[str, Mapping[str, str]] = {}

    async def get(self, stage: Stage, priority: float) -> Mapping[str, str]:
        if stage.baseline is not None and not stage.lazy_baseline:
            return stage.baseline
        async with self._lock:
            if stage.command not in self._done:
                sb = await fork(self._make_fork)
                try:
                    limit_s = stage.timeout_s or self._timeout
                    res = await self._run_stage(
                        stage, sb, None, priority, f"{stage.name} baseline", limit_s
                    )
                    out = res.stdout + "\n" + res.stderr  # the tests' text: read off the loop
                    self._done[stage.command] = dict(await asyncio.to_thread(parse_outcomes, out))
                finally:
                    await close(sb)
            return self._done[stage.command]


@dataclass(frozen=True, slots=True)
class Joint:
    """The joint result of a stage's shards, judged like one run."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool


def joint(results: Sequence[Ran]) -> Joint:
    return Joint(
        next((r.returncode for r in results if r.returncode), 0),
        "\n".join(r.stdout for r in results),
        "\n".join(r.stderr for r in results),
        any(bool(r.timed_out) for r in results),
    )


def still_fails(stage: Stage, res: Ran) -> bool:
    """Whether a stage that must pass ran its tests and they failed (not: could not run)."""
    if stage.baseline is not None or stage.lazy_baseline:
        return False
    runner = parse_test_command(stage.command).runner
    out = res.stdout + "\n" + res.stderr
    return classify_run(runner, res.returncode, out, timed_out=bool(res.timed_out)).status not in (
        "passed",
        "could_not_run",
    )


async def stage_verdict(stage: Stage, res: Ran, baseline: Mapping[str, str] | None) -> str | None:
    """Why the stage rejects the candidate (None: it passed). The output is the tests' to
    write, up to the sandbox's cap: read in a worker thread, off the event loop."""
    return await asyncio.to_thread(_verdict, stage, res, baseline)


def _verdict(stage: Stage, res: Ran, baseline: Mapping[str, str] | None) -> str | None:
    out = res.stdout + "\n" + res.stderr
    if baseline is None:
        runner = parse_test_command(stage.command).runner
        v = classify_run(runner, res.returncode, out, timed_out=bool(res.timed_out))
        if v.status == "passed":
            return None
        return v.reason if v.status == "could_not_run" else f"still fails: {v.reason}"
    if res.timed_out:
        return "timed out"
    if not baseline:
        return None  # the stage named no tests before the change: nothing to keep green
    broken = regressions(baseline, out)
    if broken:
        where = " elsewhere in the suite" if stage.name == "suite" else ""
        return f"breaks {len(broken)} previously passing test(s){where}, e.g. {broken[0]}"
    return None


@dataclass(frozen=True, slots=True)
class Once:
    """One stage run for one candidate outside the search (:func:`once`).

    ``broke``: tests that passed before fail (why: how many, one named);
    ``unjudged``: the stage gave no verdict (timed out, or its tests did not
    run before the change), why in one line; neither: it holds.
    """

    broke: str | None = None
    unjudged: str | None = None


async def once(
    stage: Stage,
    diff: str,
    make_fork: Callable[[], Workspace],
    run: Runner,
    timeout_s: float,
    *,
    together: bool = False,
) -> Once:
    """``stage`` (a baseline stage) on a pristine fork and on a fork with ``diff`` applied;
    ``together``: the two at once (neither waits on the other), where the caller has more
    than one process slot."""
    limit_s = stage.timeout_s or timeout_s

    async def pristine() -> Ran:
        sb = await fork(make_fork)
        try:
            return await run(sb, stage.command, f"{stage.name} baseline", limit_s)
        finally:
            await close(sb)

    async def patched() -> Ran | str:
        sb = await fork(make_fork)
        try:
            applied = await in_thread(lambda: sb.apply_patch(diff))
            if not applied.applied:
                return f"the patch did not apply: {applied.message[:120]}"
            return await run(sb, stage.command, f"{stage.name} tests", limit_s)
        finally:
            await close(sb)

    if together:
        before, res = await asyncio.gather(pristine(), patched())
    else:
        before, res = await pristine(), await patched()
    if before.timed_out:
        return Once(unjudged=f"timed out after {limit_s:.0f} s before the change")
    baseline = dict(parse_outcomes(before.stdout + "\n" + before.stderr))
    if not any(v == "passed" for v in baseline.values()):
        return Once(unjudged="no test of them passed before the change")
    if isinstance(res, str):
        return Once(unjudged=res)
    why = await stage_verdict(stage, res, baseline)
    if why is None:
        return Once()
    return Once(unjudged=why) if res.timed_out else Once(broke=why)
