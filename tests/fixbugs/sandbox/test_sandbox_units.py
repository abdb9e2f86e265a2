"""Pure parts of the sandbox: limit verdicts, output capping, the wrapper argv."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from fixbugs.sandbox import CappedOutput, Limits, Mechanisms, classify_limit
from fixbugs.sandbox.containment import wrap

FULL = Mechanisms(root=True, namespaces=True, setpriv=True, prlimit=True)
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
        limits=Limits(timeout_s=10, memory_mb=512, max_processes=32),
        mechanisms=FULL,
        uid=1234,
        base=Path("/sb"),
        workdir=Path("/sb/repo"),
    )
    assert argv[0] == "unshare" and "--net" in argv and "--pid" in argv and "--mount" in argv
    assert "--reuid=1234" in argv and "--no-new-privs" in argv
    assert f"--as={512 * 1024 * 1024}:{512 * 1024 * 1024}" in argv
    assert "--nproc=32:32" in argv
    assert argv[-2:] == ["pytest", "-x"]


def test_wrap_allows_network_only_when_asked() -> None:
    argv = wrap(
        ["true"],
        limits=Limits(),
        mechanisms=FULL,
        uid=1,
        base=Path("/sb"),
        workdir=Path("/sb/repo"),
        network=True,
    )
    assert "--net" not in argv and "--pid" in argv
    assert "sandbox: network allowed for this command" in FULL.notes(network=True)


def test_missing_mechanisms_are_said_not_hidden() -> None:
    argv = wrap(
        ["true"], limits=Limits(), mechanisms=BARE, uid=None, base=Path("/b"), workdir=Path("/b")
    )
    assert argv == ["true"]
    notes = " ".join(BARE.notes(network=False))
    assert "network is not isolated" in notes
    assert "writes outside the copy are not prevented" in notes
    assert "prlimit missing" in notes
    assert FULL.notes(network=False) == ()


def test_limits_reject_nonsense() -> None:
    with pytest.raises(ValueError):
        Limits(timeout_s=0)
    with pytest.raises(ValueError):
        Limits(max_processes=0)
