"""Pure parts of the sandbox: limit verdicts, output capping, the wrapper argv."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from fixbugs.sandbox import (
    CappedOutput,
    CgroupSupport,
    Limits,
    Mechanisms,
    UntrustedFile,
    View,
    classify_limit,
    interpreter_paths,
    limit_note,
    mounts,
    read_untrusted_sync,
)
from fixbugs.sandbox.cgroups import sweep_stale_cgroups
from fixbugs.sandbox.containment import Confinement, wrap
from fixbugs.sandbox.mounts import sweep_stale
from fixbugs.sandbox.owners import owner_alive, owner_mark
from fixbugs.sandbox.runner import _unwrapped_status

CGROUPS = CgroupSupport(1, Path("/cg/memory"), Path("/cg/pids"), Path("/cg/cpu"))
FULL = Mechanisms(
    root=True,
    namespaces=True,
    setpriv=True,
    prlimit=True,
    cgroups=CGROUPS,
    copy_tmpfs=True,
    userns=True,
)
BARE = Mechanisms(root=False, namespaces=False, setpriv=False, prlimit=False)


def test_time_and_output_come_from_the_driver() -> None:
    assert classify_limit(returncode=-9, timed_out=True, output_runaway=False, stderr_tail="") == (
        "time"
    )
    assert (
        classify_limit(returncode=-9, timed_out=False, output_runaway=True, stderr_tail="")
        == "output"
    )
    assert (
        classify_limit(
            returncode=-signal.SIGXCPU, timed_out=False, output_runaway=False, stderr_tail=""
        )
        == "time"
    )


@pytest.mark.parametrize(
    ("stderr", "expected"),
    [
        ("Traceback ...\nMemoryError\n", "memory"),
        ("terminate called after throwing an instance of 'std::bad_alloc'", "memory"),
        ("sh: 1: Cannot fork", "processes"),
        ("BlockingIOError: [Errno 11] Resource temporarily unavailable", "processes"),
        ("OSError: [Errno 28] No space left on device", "disk"),
        ("OSError: [Errno 27] File too large", "file_size"),
        ("AssertionError: 1 != 2", None),
    ],
)
def test_memory_and_processes_are_read_from_messages(stderr: str, expected: str | None) -> None:
    got = classify_limit(returncode=1, timed_out=False, output_runaway=False, stderr_tail=stderr)
    assert got == expected


def test_a_command_that_exits_zero_hit_no_limit() -> None:
    got = classify_limit(
        returncode=0, timed_out=False, output_runaway=False, stderr_tail="MemoryError handled"
    )
    assert got is None


def test_capped_output_keeps_head_and_tail() -> None:
    cap = CappedOutput(24, runaway_factor=4)
    for i in range(10):
        cap.feed(f"line{i}\n".encode())
    text = cap.text()
    assert cap.truncated and cap.total == 60
    assert text.startswith("line0\nline1\n")
    assert text.endswith("line9\n")
    assert "bytes of output dropped" in text
    assert not cap.runaway
    cap.feed(b"x" * 40)
    assert cap.runaway


def test_capped_output_under_cap_is_verbatim() -> None:
    cap = CappedOutput(100)
    cap.feed(b"hello ")
    cap.feed(b"world")
    assert cap.text() == "hello world"
    assert not cap.truncated


def test_wrap_with_every_mechanism() -> None:
    argv = wrap(
        ["pytest", "-x"],
        Confinement(
            limits=Limits(timeout_s=10, memory_mb=512, max_processes=32),
            mechanisms=FULL,
            uid=1234,
            base=Path("/sb"),
            workdir=Path("/sb/repo"),
        ),
    )
    assert argv[0] == "bwrap" and "--unshare-net" in argv and "--unshare-pid" in argv
    assert "--reuid=1234" in argv and "--no-new-privs" in argv
    assert f"--as={512 * 1024 * 1024}:{512 * 1024 * 1024}" in argv
    assert "--nproc=32:32" in argv
    assert argv[-2:] == ["pytest", "-x"]


def test_wrap_allows_network_only_when_asked() -> None:
    argv = wrap(
        ["true"],
        Confinement(
            limits=Limits(),
            mechanisms=FULL,
            uid=1,
            base=Path("/sb"),
            workdir=Path("/sb/repo"),
            network=True,
        ),
    )
    assert "--unshare-net" not in argv and "--unshare-pid" in argv
    assert "sandbox: network allowed for this command" in FULL.notes(network=True)


def test_missing_mechanisms_are_said_not_hidden() -> None:
    argv = wrap(
        ["true"],
        Confinement(
            limits=Limits(),
            mechanisms=BARE,
            uid=None,
            base=Path("/b"),
            workdir=Path("/b"),
        ),
    )
    assert argv == ["true"]
    notes = " ".join(BARE.notes(network=False))
    assert "network are not hidden" in notes
    assert "writes and reads outside the copy are not prevented" in notes
    assert "prlimit missing" in notes
    assert "no cgroup" in notes and "disk unbounded" in notes
    assert FULL.notes(network=False) == ()


def test_the_command_keeps_no_capability_and_joins_its_cgroup() -> None:
    view = View(
        writable=(Path("/sb/repo"),),
        private=(Path("/sb/home"),),
        readonly=(Path("/root/.pyenv/versions/3.8.18"), Path("/root/.cache/envs/x")),
    )
    argv = wrap(
        ["pytest"],
        Confinement(
            limits=Limits(),
            mechanisms=FULL,
            uid=7,
            base=Path("/sb"),
            workdir=Path("/sb/repo"),
            view=view,
        ),
        cgroup_procs=("/cg/memory/g/cgroup.procs", "/cg/pids/g/cgroup.procs"),
    )
    assert argv[0] == "/bin/sh" and argv[4] == "/cg/memory/g/cgroup.procs:/cg/pids/g/cgroup.procs"
    assert argv[5] == "bwrap"
    caps = [a for a in argv if "caps" in a or "bounding" in a]
    assert caps == ["--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"]
    assert not any("dac_read_search" in a for a in argv)
    # the user namespace is entered after the uid drop, mapping only that uid
    userns = argv.index("--map-current-user")
    assert argv.index("setpriv") < userns < argv.index("prlimit")
    mounts = argv[argv.index("bwrap") : argv.index("setpriv")]
    pairs = {(mounts[i], mounts[i + 1]) for i in range(len(mounts) - 1)}
    assert ("--bind-try", "/sb/repo") in pairs
    assert {("--tmpfs", "/sb/home"), ("--tmpfs", "/tmp"), ("--remount-ro", "/")} <= pairs
    ro = [mounts[i + 1] for i, a in enumerate(mounts) if a == "--ro-bind-try"]
    # the system directories first, then the extras
    assert set(ro[-2:]) == {str(p) for p in view.readonly}
    assert "/usr" in ro and "/root" not in ro and "/sb" not in ro
    # nothing is bound read-write but the copy
    assert [mounts[i + 1] for i, a in enumerate(mounts) if a.startswith("--bind")] == ["/sb/repo"]


def test_limit_notes_name_the_limit() -> None:
    assert limit_note("memory", Limits(memory_mb=256)).startswith("limit hit: memory")
    assert "256 MB" in limit_note("memory", Limits(memory_mb=256))
    assert "(10 MB for the copy)" in limit_note("disk", Limits(), disk_mb=10)
    got = classify_limit(
        returncode=-9, timed_out=False, output_runaway=False, stderr_tail="", cgroup_memory=True
    )
    assert got == "memory"
    got = classify_limit(
        returncode=1, timed_out=False, output_runaway=False, stderr_tail="", disk_full=True
    )
    assert got == "disk"
    assert classify_limit(
        returncode=-signal.SIGXFSZ, timed_out=False, output_runaway=False, stderr_tail=""
    ) == ("file_size")


def test_untrusted_reads_refuse_links_fifos_and_big_files(tmp_path: Path) -> None:
    ok = tmp_path / "ok.json"
    ok.write_bytes(b"{}")
    assert read_untrusted_sync(ok, max_bytes=10) == b"{}"
    link = tmp_path / "zero"
    link.symlink_to("/dev/zero")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    for bad in (link, fifo, big, tmp_path / "missing"):
        with pytest.raises(UntrustedFile):
            read_untrusted_sync(bad, max_bytes=10)


def test_interpreter_paths_name_the_venv_and_its_base(tmp_path: Path) -> None:
    prefix = tmp_path / "pyenv" / "3.8"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "python3.8").write_text("")
    venv = tmp_path / "envs" / "case"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {prefix / 'bin'}\n")
    (venv / "bin" / "python").symlink_to(prefix / "bin" / "python3.8")
    assert interpreter_paths(venv / "bin" / "python") == (venv, prefix)
    assert interpreter_paths(Path("/usr/bin/python3")) == ()


def test_limits_reject_nonsense() -> None:
    with pytest.raises(ValueError):
        Limits(timeout_s=0)
    with pytest.raises(ValueError):
        Limits(max_processes=0)


def test_an_owner_mark_names_this_process_until_it_is_gone() -> None:
    mark = owner_mark()
    assert owner_alive(mark)
    pid, _, start = mark.partition("-")
    assert not owner_alive(f"{pid}-{int(start) + 1}")  # the pid, reused by another process
    assert not owner_alive("garbage")


def test_the_cgroups_of_a_dead_owner_are_removed_and_no_others(tmp_path: Path) -> None:
    support = CgroupSupport(1, tmp_path / "memory", tmp_path / "pids", tmp_path / "cpu")
    pid, _, start = owner_mark().partition("-")
    dead = f"fixbugs-{pid}-{int(start) + 1}-0123456789ab"
    live = f"fixbugs-{owner_mark()}-ba9876543210"
    for ctrl in ("memory", "pids", "cpu"):
        for name in (dead, live, "fixbugs-0123456789ab", "someone-else"):
            (tmp_path / ctrl / name).mkdir(parents=True)
    gone = sweep_stale_cgroups(support)
    assert sorted(gone) == sorted(tmp_path / c / dead for c in ("memory", "pids", "cpu"))
    for ctrl in ("memory", "pids", "cpu"):
        left = sorted(p.name for p in (tmp_path / ctrl).iterdir())
        assert left == sorted([live, "fixbugs-0123456789ab", "someone-else"])


def test_bwraps_exit_for_a_signal_reads_as_the_signal() -> None:
    assert _unwrapped_status(128 + signal.SIGXCPU) == -signal.SIGXCPU
    assert _unwrapped_status(137) == -signal.SIGKILL
    assert _unwrapped_status(1) == 1 and _unwrapped_status(0) == 0
    assert _unwrapped_status(255) == 255  # past any signal number


def test_sandboxes_a_killed_process_left_in_a_folder_are_deleted_and_no_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the host's mount table is not this folder's: another test's worker killed
    # with its copy mounted leaves a stale mount that a real sweep would also take
    monkeypatch.setattr(mounts, "_our_mounts", list)
    pid, _, start = owner_mark().partition("-")
    owners = {"dead": f"{pid}-{int(start) + 1}", "live": owner_mark(), "unmarked": None}
    for what, mark in owners.items():
        base = tmp_path / f"fixbugs-sandbox-{what}"
        (base / "repo").mkdir(parents=True)
        if mark is not None:
            (base / "owner").write_text(mark)
    (tmp_path / "someone-else").mkdir()
    assert sweep_stale(tmp_path) == [tmp_path / "fixbugs-sandbox-dead"]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["fixbugs-sandbox-live", "fixbugs-sandbox-unmarked", "someone-else"]
    assert sweep_stale(tmp_path) == []  # once per process and folder
