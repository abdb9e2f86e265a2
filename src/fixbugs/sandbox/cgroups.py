"""One cgroup per command: memory, processes and CPU of the whole command.

rlimits bind each process alone: four processes may each hold the
"1024 MB" a limit allows. A cgroup bounds what the command's processes
use *together*. Both layouts are supported: cgroup v1 (the ``memory``,
``pids`` and ``cpu`` controllers mounted apart, as on these machines) and
cgroup v2 (one unified tree, where our own cgroup must delegate the
controllers). :func:`detect_cgroups` finds what works once;
:class:`CommandCgroup` is the life of one command's group: create, limit,
read what was hit, kill what is left, remove. A group's name carries its
owner (:mod:`fixbugs.sandbox.owners`), so the first group a process makes
removes those a killed process left behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from fixbugs.sandbox.owners import owner_alive, owner_mark

__all__ = [
    "CgroupFacts",
    "CgroupSupport",
    "CommandCgroup",
    "detect_cgroups",
    "parse_keyed",
    "read_facts",
    "sweep_stale_cgroups",
]

_CPU_PERIOD_US = 100_000
_NAME = re.compile(r"fixbugs-(\d+-\d+)-[0-9a-f]{12}")
_swept = threading.Event()


@dataclass(frozen=True)
class CgroupSupport:
    """Where new cgroups are made: v1 (per-controller parents) or v2 (one parent)."""

    version: int
    memory: Path | None
    pids: Path | None
    cpu: Path | None

    def describe(self) -> str:
        have = [n for n in ("memory", "pids", "cpu") if getattr(self, n) is not None]
        return f"cgroup v{self.version} ({', '.join(have)})"


@dataclass(frozen=True)
class CgroupFacts:
    """What the kernel counted for a finished command's group.

    ``memory_kills`` is how many of its processes the OOM killer killed at
    the group's memory limit; ``memory_oom`` that the group ran out of
    memory at all (v2 also counts an OOM in which nothing was killed).
    ``refused_forks`` is how many forks the group's pids limit refused.
    These are the kernel's own records: a command whose children were
    killed or refused is told apart from one that exits 0 without help.
    """

    memory_kills: int = 0
    memory_oom: bool = False
    refused_forks: int = 0
    peak_memory_bytes: int | None = None

    @property
    def memory_hit(self) -> bool:
        return self.memory_oom or self.memory_kills > 0

    @property
    def pids_hit(self) -> bool:
        return self.refused_forks > 0


def parse_keyed(text: str) -> dict[str, int]:
    """A ``key value`` per line text: ``memory.events``, ``pids.events``, ``memory.oom_control``."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            out[key] = int(value.strip())
    return out


def read_facts(version: int, *, memory: str, pids: str, peak: str = "") -> CgroupFacts:
    """The facts of a group from its files' text (a missing file reads as "").

    ``memory`` is v1's ``memory.oom_control`` (``oom_kill``, kernel 4.13 on)
    or v2's ``memory.events`` (``oom_kill``; ``oom`` and ``oom_group_kill``
    say an OOM happened even where no kill is counted). v1's
    ``memory.failcnt`` is not used: it also counts page cache reclaimed at
    the limit, which kills nothing. ``pids`` is ``pids.events`` (``max``:
    forks refused) in both versions; ``peak`` the peak usage in bytes.
    """
    mem = parse_keyed(memory)
    kills = mem.get("oom_kill", 0)
    oom = kills > 0
    if version != 1:
        oom = oom or mem.get("oom", 0) > 0 or mem.get("oom_group_kill", 0) > 0
    try:
        peak_bytes: int | None = int(peak.split()[0])
    except (ValueError, IndexError):
        peak_bytes = None
    return CgroupFacts(
        memory_kills=kills,
        memory_oom=oom,
        refused_forks=parse_keyed(pids).get("max", 0),
        peak_memory_bytes=peak_bytes,
    )


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, fs type, super options) of every cgroup mount."""
    out = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        pre, _, post = line.partition(" - ")
        fields, post_f = pre.split(), post.split()
        if len(fields) > 4 and len(post_f) >= 3 and post_f[0] in ("cgroup", "cgroup2"):
            out.append((fields[4], post_f[0], post_f[2]))
    return out


def _own_paths() -> dict[str, str]:
    """Controller (or "" for v2) -> this process's cgroup path."""
    own: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return own
    for line in lines:
        _, ctrls, path = line.split(":", 2)
        for c in ctrls.split(",") if ctrls else [""]:
            own[c] = path
    return own


def _writable_parent(mount: str, own: str) -> Path | None:
    """Our own cgroup under ``mount`` if we may create children there."""
    parent = Path(mount) / own.lstrip("/")
    probe = parent / f"fixbugs-probe-{secrets.token_hex(4)}"
    try:
        probe.mkdir()
    except OSError:
        return None
    with contextlib.suppress(OSError):
        probe.rmdir()
    return parent


def detect_cgroups() -> CgroupSupport | None:
    """The cgroup layout new command groups can be made in, or None."""
    mounts, own = _mounts(), _own_paths()
    v1: dict[str, Path | None] = {}
    for point, fstype, opts in mounts:
        if fstype != "cgroup":
            continue
        for ctrl in ("memory", "pids", "cpu"):
            if ctrl in opts.split(",") and ctrl in own and ctrl not in v1:
                v1[ctrl] = _writable_parent(point, own[ctrl])
    if v1.get("memory") is not None and v1.get("pids") is not None:
        return CgroupSupport(1, v1["memory"], v1["pids"], v1.get("cpu"))
    for point, fstype, _ in mounts:
        if fstype != "cgroup2" or "" not in own:
            continue
        parent = Path(point) / own[""].lstrip("/")
        try:
            ctrls = (parent / "cgroup.controllers").read_text().split()
            (parent / "cgroup.subtree_control").write_text("+memory +pids +cpu")
        except OSError:
            continue
        if "memory" in ctrls and "pids" in ctrls and _writable_parent(point, own[""]):
            return CgroupSupport(2, parent, parent, parent if "cpu" in ctrls else None)
    return None


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
    except OSError:
        return False
    return True


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


class CommandCgroup:
    """The cgroup(s) of one command; blocking file I/O on cgroupfs only."""

    def __init__(self, support: CgroupSupport, dirs: dict[str, Path]) -> None:
        self.support = support
        self.dirs = dirs

    @classmethod
    def create(
        cls, support: CgroupSupport, *, memory_bytes: int, max_pids: int, cpus: float | None
    ) -> CommandCgroup | None:
        """A new group with the limits written, or None when it could not be made."""
        if not _swept.is_set():
            _swept.set()
            sweep_stale_cgroups(support)
        name = f"fixbugs-{owner_mark()}-{secrets.token_hex(6)}"
        dirs: dict[str, Path] = {}
        try:
            for ctrl in ("memory", "pids", "cpu"):
                parent = getattr(support, ctrl)
                if parent is None:
                    continue
                d = parent / name
                if d not in dirs.values():
                    d.mkdir()
                dirs[ctrl] = d
        except OSError:
            cls(support, dirs).remove()
            return None
        group = cls(support, dirs)
        mem, pids = dirs["memory"], dirs["pids"]
        if support.version == 1:
            ok = _write(mem / "memory.limit_in_bytes", str(memory_bytes))
            _write(mem / "memory.memsw.limit_in_bytes", str(memory_bytes))
            ok = _write(pids / "pids.max", str(max_pids)) and ok
            if cpus and "cpu" in dirs:
                _write(dirs["cpu"] / "cpu.cfs_period_us", str(_CPU_PERIOD_US))
                _write(dirs["cpu"] / "cpu.cfs_quota_us", str(int(cpus * _CPU_PERIOD_US)))
        else:
            ok = _write(mem / "memory.max", str(memory_bytes))
            _write(mem / "memory.swap.max", "0")
            ok = _write(pids / "pids.max", str(max_pids)) and ok
            if cpus and "cpu" in dirs:
                _write(dirs["cpu"] / "cpu.max", f"{int(cpus * _CPU_PERIOD_US)} {_CPU_PERIOD_US}")
        if not ok:
            group.remove()
            return None
        return group

    @property
    def procs_files(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(str(d / "cgroup.procs") for d in self.dirs.values()))

    def facts(self) -> CgroupFacts:
        """What the kernel recorded of the command's memory and process limits.

        Read before :meth:`remove`: the records go with the group.
        """
        mem, pids = self.dirs["memory"], self.dirs["pids"]
        v1 = self.support.version == 1
        return read_facts(
            self.support.version,
            memory=_text(mem / ("memory.oom_control" if v1 else "memory.events")),
            pids=_text(pids / "pids.events"),
            peak=_text(mem / ("memory.max_usage_in_bytes" if v1 else "memory.peak")),
        )

    def pids(self) -> list[int]:
        out: list[int] = []
        for f in self.procs_files:
            with contextlib.suppress(OSError, ValueError):
                out += [int(x) for x in Path(f).read_text().split()]
        return out

    def kill_all(self) -> None:
        """SIGKILL every process still in the group."""
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def remove(self, *, attempts: int = 1000) -> bool:
        """Kill what is left and remove the group; a killed process takes a moment to leave."""
        for _ in range(attempts):
            self.kill_all()
            left = []
            for d in set(self.dirs.values()):
                try:
                    d.rmdir()
                except FileNotFoundError:
                    continue
                except OSError:
                    left.append(d)
            if not left:
                return True
            time.sleep(0.01)
        return False


def sweep_stale_cgroups(support: CgroupSupport) -> list[Path]:
    """Remove the groups whose owning process is gone, killing what is left in them.

    A live owner's groups are never touched: one it has just made is
    empty until its command joins it.
    """
    gone: list[Path] = []
    parents = {p for p in (support.memory, support.pids, support.cpu) if p is not None}
    for parent in parents:
        try:
            children = list(parent.iterdir())
        except OSError:
            continue
        for d in children:
            m = _NAME.fullmatch(d.name)
            if m is None or owner_alive(m.group(1)):
                continue
            group = CommandCgroup(support, {"any": d})
            group.kill_all()
            with contextlib.suppress(OSError):
                d.rmdir()
                gone.append(d)
    return gone
