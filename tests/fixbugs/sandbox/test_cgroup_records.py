"""The cgroup's own record of a command's limits, read from fake cgroup folders.

Both layouts are read here without root: v1's ``memory.oom_control`` and
v2's ``memory.events`` (processes killed at the memory limit), and
``pids.events`` (forks refused). A recorded kill or refusal is a limit hit
even when the command exits 0; its note counts what the kernel did.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from fixbugs.sandbox import CgroupSupport, Limits, classify_limit, limit_note
from fixbugs.sandbox.cgroups import CgroupFacts, CommandCgroup, read_facts

V1_OOM_CONTROL = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"
V2_EVENTS = "low 0\nhigh 0\nmax 41\noom 3\noom_kill 3\noom_group_kill 0\n"
PIDS_EVENTS = "max 5\n"


def _group(tmp_path: Path, version: int, files: dict[str, str]) -> CommandCgroup:
    """A command's group over fake folders (v1: one per controller; v2: one)."""
    if version == 1:
        dirs = {c: tmp_path / c / "fixbugs-g" for c in ("memory", "pids")}
    else:
        dirs = dict.fromkeys(("memory", "pids"), tmp_path / "unified" / "fixbugs-g")
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        ctrl, _, name = rel.partition("/")
        (dirs[ctrl] / name).write_text(text)
    support = CgroupSupport(version, dirs["memory"].parent, dirs["pids"].parent, None)
    return CommandCgroup(support, dirs)


def test_v1_counts_the_processes_killed_and_the_forks_refused(tmp_path: Path) -> None:
    group = _group(
        tmp_path,
        1,
        {
            "memory/memory.oom_control": V1_OOM_CONTROL,
            "memory/memory.max_usage_in_bytes": "268435456\n",
            "memory/memory.failcnt": "77\n",
            "pids/pids.events": PIDS_EVENTS,
        },
    )
    facts = group.facts()
    assert facts == CgroupFacts(
        memory_kills=3, memory_oom=True, refused_forks=5, peak_memory_bytes=256 << 20
    )
    assert facts.memory_hit and facts.pids_hit


def test_v2_counts_the_processes_killed_and_the_forks_refused(tmp_path: Path) -> None:
    group = _group(
        tmp_path,
        2,
        {
            "memory/memory.events": V2_EVENTS,
            "memory/memory.peak": "1073741824\n",
            "pids/pids.events": PIDS_EVENTS,
        },
    )
    assert group.facts() == CgroupFacts(
        memory_kills=3, memory_oom=True, refused_forks=5, peak_memory_bytes=1 << 30
    )


@pytest.mark.parametrize("version", [1, 2])
def test_a_group_that_hit_nothing_or_lost_its_files_records_nothing(
    tmp_path: Path, version: int
) -> None:
    quiet = {
        "memory/memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
        "memory/memory.events": "max 12\noom 0\noom_kill 0\n",
        # v1 counts page cache reclaimed at the limit here: no process was killed
        "memory/memory.failcnt": "12\n",
        "pids/pids.events": "max 0\n",
    }
    facts = _group(tmp_path / "quiet", version, quiet).facts()
    assert facts == CgroupFacts(memory_kills=0, memory_oom=False, refused_forks=0)
    assert not facts.memory_hit and not facts.pids_hit
    assert _group(tmp_path / "gone", version, {}).facts() == CgroupFacts()


def test_v2_an_oom_without_a_counted_kill_is_still_a_memory_hit() -> None:
    for events in ("oom 1\noom_kill 0\n", "oom 0\noom_kill 0\noom_group_kill 1\n"):
        facts = read_facts(2, memory=events, pids="")
        assert facts.memory_hit and facts.memory_kills == 0, events
    # v1 has no such line: its oom_kill counter is the record
    assert not read_facts(1, memory="under_oom 0\noom_kill 0\n", pids="").memory_hit


def test_garbage_in_the_files_reads_as_no_record() -> None:
    facts = read_facts(2, memory="oom_kill lots\nmax\n\n", pids="max x\n", peak="max\n")
    assert facts == CgroupFacts()


def test_a_recorded_kill_or_refusal_is_a_limit_hit_though_the_command_exits_0() -> None:
    verdict = partial(classify_limit, timed_out=False, output_runaway=False, stderr_tail="")
    assert verdict(returncode=0, cgroup_memory=True) == "memory"
    assert verdict(returncode=0, cgroup_pids=True) == "processes"
    assert verdict(returncode=0, cgroup_memory=True, cgroup_pids=True) == "memory"
    assert verdict(returncode=0) is None
    # the driver's own kill stays the reason
    got = classify_limit(
        returncode=-9, timed_out=True, output_runaway=False, stderr_tail="", cgroup_memory=True
    )
    assert got == "time"


def test_the_note_counts_what_the_kernel_did() -> None:
    limits = Limits(memory_mb=256, max_processes=20)
    note = limit_note("memory", limits, memory_kills=3)
    assert note.startswith("limit hit: memory (") and "256 MB" in note
    assert "the kernel killed 3 of its processes" in note
    assert "killed" not in limit_note("memory", limits)  # inferred from a message: no count
    assert "refused 1 fork)" in limit_note("processes", limits, refused_forks=1)
    assert "refused 5 forks)" in limit_note("processes", limits, refused_forks=5)
