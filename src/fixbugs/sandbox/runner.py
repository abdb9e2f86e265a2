"""The async driver that runs one contained command.

It only moves bytes and enforces the deadline: containment is
:func:`~fixbugs.sandbox.containment.wrap`'s argv, output capping is
:class:`~fixbugs.sandbox.output.CappedOutput`, and the verdict is
:func:`~fixbugs.sandbox.limits.classify_limit`. Every task it starts belongs
to one ``TaskGroup``; if the caller is cancelled, the command's whole
process group is killed before the cancellation propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentrt import Clock, SystemClock
from fixbugs.sandbox.cgroups import CgroupFacts, CommandCgroup
from fixbugs.sandbox.containment import Confinement, Mechanisms, wrap
from fixbugs.sandbox.limits import CommandResult, LimitHit, Limits, classify_limit, limit_note
from fixbugs.sandbox.output import CappedOutput
from fixbugs.sandbox.owners import stat_fields

__all__ = ["children_of", "kill_command", "kill_group", "run_contained", "run_contained_sync"]

# After the command exits, how long its output pipes may stay open (held by
# a daemonized child when there is no PID namespace) before we stop reading.
PIPE_GRACE_S = 2.0
_CHUNK = 65536


def kill_group(pgid: int) -> None:
    """SIGKILL a whole process group; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def children_of(pid: int) -> list[int]:
    """Pids whose parent is ``pid`` (from ``/proc``; no ``children`` file needed)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = stat_fields(int(entry.name))
        if fields is not None and len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def kill_command(pid: int, *, namespaced: bool) -> None:
    """Kill a running command and everything it started.

    With a PID namespace, killing its init (``bwrap``'s child) makes the
    kernel kill every process in it, and ``bwrap`` exits only once they
    are all gone, so "the command ended" implies "nothing of it is left".
    Without one, the process group is all we can reach.
    """
    inits = children_of(pid) if namespaced else []
    for child in inits:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    if not inits:
        kill_group(pid)


async def run_contained(
    argv: Sequence[str],
    how: Confinement,
    *,
    env: Mapping[str, str],
    clock: Clock | None = None,
    disk: Path | None = None,
    disk_mb: int | None = None,
) -> CommandResult:
    """Run ``argv`` contained as ``how`` says, killing it at the deadline or as a runaway
    writer.

    ``disk`` is the size-limited filesystem of the copy: full after the
    command means it hit its disk limit.
    """
    clock = clock or SystemClock()
    group = await asyncio.to_thread(_new_cgroup, how.mechanisms, how.limits)
    try:
        return await _run(argv, how, env=env, clock=clock, group=group, disk=disk, disk_mb=disk_mb)
    finally:
        if group is not None:
            await asyncio.to_thread(group.remove)


def _new_cgroup(mechanisms: Mechanisms, limits: Limits) -> CommandCgroup | None:
    if mechanisms.cgroups is None:
        return None
    return CommandCgroup.create(
        mechanisms.cgroups,
        memory_bytes=limits.memory_mb * 1024 * 1024,
        max_pids=limits.max_processes,
        cpus=limits.cpus,
    )


def _unwrapped_status(returncode: int) -> int:
    """The command's own status from ``bwrap``'s.

    bwrap exits 128 + N when its command died of signal N; report that as
    ``subprocess`` does (-N), so a ``SIGXCPU`` or ``SIGXFSZ`` reads as the
    limit it is. A command that itself exits 129-192 reads as a signal too,
    which is what a shell's exit status means by such a value.
    """
    if 128 < returncode <= 128 + 64:
        return 128 - returncode
    return returncode


def _disk_full(path: Path | None) -> bool:
    if path is None:
        return False
    try:
        st = os.statvfs(path)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 64 * 1024


async def _run(
    argv: Sequence[str],
    how: Confinement,
    *,
    env: Mapping[str, str],
    clock: Clock,
    group: CommandCgroup | None,
    disk: Path | None,
    disk_mb: int | None,
) -> CommandResult:
    limits, mechanisms, workdir = how.limits, how.mechanisms, how.workdir
    wrapped = wrap(argv, how, cgroup_procs=group.procs_files if group is not None else ())
    out = CappedOutput(limits.max_output_bytes, runaway_factor=limits.runaway_factor)
    err = CappedOutput(limits.max_output_bytes, runaway_factor=limits.runaway_factor)
    started = clock.now()
    proc = await asyncio.create_subprocess_exec(
        *wrapped,
        cwd=str(workdir),
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    killed_for: list[str] = []

    def stop() -> None:
        """The command and everything it started: its namespace's init, and its cgroup."""
        kill_command(proc.pid, namespaced=mechanisms.namespaces)
        if group is not None:
            group.kill_all()

    def kill(reason: str) -> None:
        if not killed_for:
            killed_for.append(reason)
        stop()

    async def pump(stream: asyncio.StreamReader | None, cap: CappedOutput) -> None:
        if stream is None:
            return
        while chunk := await stream.read(_CHUNK):
            cap.feed(chunk)
            if cap.runaway:
                kill("output")

    async def watchdog() -> None:
        await clock.sleep(limits.timeout_s)
        kill("time")

    try:
        async with asyncio.TaskGroup() as tg:
            pumps = [tg.create_task(pump(proc.stdout, out)), tg.create_task(pump(proc.stderr, err))]
            dog = tg.create_task(watchdog())
            returncode = await proc.wait()
            dog.cancel()
            # Invariant after this line: nothing of the command's group is left.
            kill_group(proc.pid)
            grace = tg.create_task(clock.sleep(PIPE_GRACE_S))
            while not grace.done() and not all(p.done() for p in pumps):
                waiting = [p for p in pumps if not p.done()]
                await asyncio.wait([*waiting, grace], return_when=asyncio.FIRST_COMPLETED)
            grace.cancel()
            for p in pumps:
                p.cancel()
    finally:
        if proc.returncode is None:
            # Cancelled (or a pump failed): the kill a deadline uses, then the command's
            # cgroup again once the wrapper is gone. A bwrap killed while still setting up
            # can leave its namespace's init without a parent-death signal; the process
            # group does not reach it (bwrap starts a new session), its cgroup does.
            stop()
            kill_group(proc.pid)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            if group is not None:
                group.kill_all()
    wall = clock.now() - started
    stdout, stderr = out.text(), err.text()
    if killed_for:
        returncode = -signal.SIGKILL  # we killed it: say so
    elif mechanisms.namespaces:
        returncode = _unwrapped_status(returncode)
    timed_out = bool(killed_for) and killed_for[0] == "time"
    facts = await asyncio.to_thread(group.facts) if group is not None else CgroupFacts()
    limit_hit = classify_limit(
        returncode=returncode,
        timed_out=timed_out,
        output_runaway=bool(killed_for) and killed_for[0] == "output",
        stderr_tail=stderr[-4000:],
        stdout_tail=stdout[-4000:],
        cgroup_memory=facts.memory_hit,
        cgroup_pids=facts.pids_hit,
        disk_full=await asyncio.to_thread(_disk_full, disk),
    )
    notes = mechanisms.notes(network=how.network)
    if mechanisms.cgroups is not None and group is None:
        notes = (*notes, "sandbox: this command's cgroup could not be made; limits per process")
    hits: list[LimitHit] = [] if limit_hit is None else [limit_hit]
    # Every limit the group recorded is named, also beside another reason
    # (children OOM-killed before the deadline killed the rest).
    recorded: tuple[tuple[LimitHit, bool], ...] = (
        ("memory", facts.memory_hit),
        ("processes", facts.pids_hit),
    )
    hits += [hit for hit, seen in recorded if seen and hit not in hits]
    for hit in hits:
        line = limit_note(
            hit,
            limits,
            disk_mb=disk_mb,
            memory_kills=facts.memory_kills,
            refused_forks=facts.refused_forks,
        )
        notes = (*notes, line)
    return CommandResult(
        argv=tuple(argv),
        returncode=returncode,
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        limit_hit=limit_hit,
        wall_s=wall,
        truncated=out.truncated or err.truncated,
        notes=notes,
    )


def run_contained_sync(
    argv: Sequence[str], how: Confinement, *, env: Mapping[str, str], stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    """Run a short contained helper (``git apply``) to completion; kill it at the deadline."""
    limits, mechanisms, workdir = how.limits, how.mechanisms, how.workdir
    wrapped = wrap(argv, how)
    with subprocess.Popen(
        wrapped,
        cwd=str(workdir),
        env=dict(env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(stdin, timeout=limits.timeout_s)
        except subprocess.TimeoutExpired:
            kill_command(proc.pid, namespaced=mechanisms.namespaces)
            stdout, stderr = proc.communicate()
            return subprocess.CompletedProcess(wrapped, -signal.SIGKILL, stdout, stderr)
        finally:
            kill_group(proc.pid)
    return subprocess.CompletedProcess(wrapped, proc.returncode, stdout, stderr)
