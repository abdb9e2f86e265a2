"""Which process owns a leftover, so a later process can clean up after it.

A sandbox leaves things in the host (its copy's tmpfs mount, its commands'
cgroups) that a process killed before cleaning up would leave behind. Each
is marked with its owner's pid and start time; a pid alone could be reused
by an unrelated process, the pair cannot.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

__all__ = ["owner_alive", "owner_mark", "stat_fields"]


def stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name (state, ppid, ...), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name may hold spaces and parentheses: fields follow the last ')'
    return stat[stat.rfind(")") + 2 :].split()


def _start_time(pid: int) -> str | None:
    fields = stat_fields(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


def owner_mark() -> str:
    """This process, as ``"<pid>-<start time>"`` (read once per process)."""
    return _mark_of(os.getpid())


@functools.cache
def _mark_of(pid: int) -> str:
    # keyed by pid: a forked child is another owner
    return f"{pid}-{_start_time(pid)}"


def owner_alive(mark: str) -> bool:
    """Whether the process ``mark`` names is still running (a bad mark: no)."""
    pid, sep, start = mark.partition("-")
    if not sep or not pid.isdigit():
        return False
    return _start_time(int(pid)) == start
