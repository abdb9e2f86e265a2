"""What a sandboxed command may use, and what it did.

:class:`Limits` is the budget of one command; :class:`CommandResult` is its
outcome. :func:`classify_limit` names which budget a finished command ran
into. It is a pure function of facts the driver observed, so the heuristics
(a Python ``MemoryError``, a shell's "can't fork") are testable on strings.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from typing import Literal

__all__ = ["CommandResult", "LimitHit", "Limits", "classify_limit", "limit_note"]

LimitHit = Literal["time", "memory", "processes", "output", "disk", "file_size"]


@dataclass(frozen=True)
class Limits:
    """The budget of one command.

    ``max_output_bytes`` caps what is kept of each of stdout and stderr (the
    head and the tail, where a test runner prints its summary); a command
    that writes ``runaway_factor`` times more than that is killed as a
    runaway writer. ``max_file_mb`` caps any single file it writes.
    ``memory_mb`` and ``max_processes`` bind the whole command where a cgroup
    is available (and each process through rlimits everywhere); ``cpus`` is
    its CPU quota; ``tmp_mb`` sizes each private tmpfs (``/tmp``, ``HOME``).
    """

    timeout_s: float = 60.0
    memory_mb: int = 1024
    max_output_bytes: int = 1_000_000
    max_processes: int = 256
    max_file_mb: int = 1024
    runaway_factor: int = 16
    cpus: float | None = 2.0
    tmp_mb: int = 256

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        if self.memory_mb < 16:
            raise ValueError("memory_mb must be at least 16")
        if self.max_output_bytes < 2:
            raise ValueError("max_output_bytes must be at least 2")
        if self.max_processes < 1:
            raise ValueError("max_processes must be at least 1")

    @property
    def cpu_s(self) -> int:
        """CPU seconds backstop: the wall-clock timeout is the real limit."""
        return int(self.timeout_s) + 5


@dataclass(frozen=True)
class CommandResult:
    """The outcome of one sandboxed command.

    ``argv`` is the command as the caller gave it (not the containment
    wrapper). ``returncode`` is negative for a signal, as in ``subprocess``.
    ``notes`` says which containment mechanism was missing for this run, so
    a weaker sandbox is never silent.
    """

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    limit_hit: LimitHit | None
    wall_s: float
    truncated: bool
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.limit_hit is None


_MEMORY = re.compile(
    r"MemoryError|Cannot allocate memory|std::bad_alloc|out of memory|"
    r"failed to allocate|mmap\(\) failed",
    re.IGNORECASE,
)
_DISK = re.compile(r"No space left on device|ENOSPC|Disk quota exceeded", re.IGNORECASE)
_FILE_SIZE = re.compile(r"File too large|EFBIG", re.IGNORECASE)
_PROCESSES = re.compile(
    r"can't fork|cannot fork|fork: retry|fork failed|BlockingIOError|"
    r"Resource temporarily unavailable|pthread_create failed",
    re.IGNORECASE,
)


def classify_limit(
    *,
    returncode: int,
    timed_out: bool,
    output_runaway: bool,
    stderr_tail: str,
    stdout_tail: str = "",
    cgroup_memory: bool = False,
    cgroup_pids: bool = False,
    disk_full: bool = False,
) -> LimitHit | None:
    """Which limit a finished command ran into, or ``None``.

    Time and output are certain (the driver killed the command). Memory and
    processes are certain when the command's cgroup recorded an OOM (a
    child killed) or a refused fork: that is a limit hit even when the
    command itself exits 0, as a shell that waits for its killed children
    does. Otherwise they are inferred from the messages programs print when
    an allocation or a fork is refused; disk and file size from the copy's
    filesystem being full and from ``ENOSPC``/``EFBIG`` messages and
    ``SIGXFSZ``. A command that prints such a message, handles it and exits
    0 did not hit a limit.
    """
    if timed_out:
        return "time"
    if output_runaway:
        return "output"
    if returncode == -signal.SIGXCPU:
        return "time"
    if returncode == -signal.SIGXFSZ:
        return "file_size"
    if cgroup_memory:
        return "memory"
    if cgroup_pids:
        return "processes"
    if returncode == 0:
        return None
    if disk_full:
        return "disk"
    text = f"{stderr_tail}\n{stdout_tail}"
    if _MEMORY.search(text):
        return "memory"
    if _PROCESSES.search(text):
        return "processes"
    if _DISK.search(text):
        return "disk"
    if _FILE_SIZE.search(text):
        return "file_size"
    return None


def limit_note(
    hit: LimitHit,
    limits: Limits,
    *,
    disk_mb: int | None = None,
    memory_kills: int = 0,
    refused_forks: int = 0,
) -> str:
    """The line a result's notes carry when a limit was hit.

    ``memory_kills`` and ``refused_forks`` are the cgroup's counts, said
    with the memory and processes limits so a reader knows how much of the
    command did not run.
    """
    what = {
        "time": f"ran past {limits.timeout_s:g} s and was killed",
        "memory": f"reached {limits.memory_mb} MB with all its processes together",
        "processes": f"reached {limits.max_processes} processes",
        "output": f"wrote over {limits.max_output_bytes * limits.runaway_factor} bytes of output",
        "disk": "filled its filesystem" + (f" ({disk_mb} MB for the copy)" if disk_mb else ""),
        "file_size": f"wrote a file over {limits.max_file_mb} MB",
    }[hit]
    if hit == "memory" and memory_kills > 0:
        what += f"; the kernel killed {memory_kills} of its processes"
    if hit == "processes" and refused_forks > 0:
        what += f"; the kernel refused {refused_forks} fork{'s' if refused_forks > 1 else ''}"
    return f"limit hit: {hit} (the command {what})"
