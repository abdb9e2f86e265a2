"""The sandbox really contains: writes, network, forks, time, memory, output.

Each escape attempt runs for real on this machine; where a test could pass
vacuously (a command that fails for an unrelated reason), a positive
control shows the same command succeeds when the barrier is lifted.
"""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import pytest

from fixbugs.sandbox import Sandbox, interpreter_paths

pytestmark = pytest.mark.needs_namespaces
PY = sys.executable


def processes_of(uid: int) -> list[int]:
    """Pids of live (non-zombie) processes whose real uid is ``uid``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = dict(
                line.split(":", 1) for line in (entry / "status").read_text().splitlines()
            )
        except (OSError, ValueError):
            continue
        if int(fields["Uid"].split()[0]) == uid and not fields["State"].strip().startswith("Z"):
            pids.append(int(entry.name))
    return pids


async def test_runs_a_test_suite_in_the_copy(sandbox: Sandbox) -> None:
    result = await sandbox.run([PY, "-c", "from pkg.calc import add; print(add(2, 2))"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"
    assert result.notes == () and result.limit_hit is None


async def test_commands_cannot_write_outside_the_copy(
    sandbox: Sandbox, original: Path, tmp_path: Path
) -> None:
    outside = [original / "pkg" / "calc.py", original / "new.txt", tmp_path / "escaped.txt"]
    script = "; ".join(f"echo pwned >> {p}" for p in outside)
    result = await sandbox.run(f"{script}; echo inside > written.txt")
    assert "Read-only file system" in result.stderr or "Permission denied" in result.stderr
    assert (original / "pkg" / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert not (original / "new.txt").exists() and not (tmp_path / "escaped.txt").exists()
    # positive control: the same command may write inside its copy
    assert (sandbox.root / "written.txt").read_text() == "inside\n"
    assert "written.txt" in sandbox.diff()


async def test_private_tmp_does_not_leak(sandbox: Sandbox, tmp_path: Path) -> None:
    result = await sandbox.run('echo x > "$TMPDIR/scratch" && cat "$TMPDIR/scratch"')
    assert result.returncode == 0 and result.stdout == "x\n"
    # the world-writable /var/tmp is private (or read-only) inside the sandbox
    marker = f"/var/tmp/fixbugs-escape-{tmp_path.name}"
    result = await sandbox.run(f"echo x > {marker} && cat {marker}")
    assert result.returncode == 0 and result.stdout == "x\n"
    assert not await asyncio.to_thread(os.path.exists, marker)


def test_a_patch_cannot_write_outside_the_copy(sandbox: Sandbox, tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.mkdir()
    escape = textwrap.dedent(
        """\
        --- a/../../victim/evil.txt
        +++ b/../../victim/evil.txt
        @@ -0,0 +1 @@
        +pwned
        """
    )
    assert not sandbox.apply_patch(escape).applied
    via_link = textwrap.dedent(
        f"""\
        diff --git a/link b/link
        new file mode 120000
        --- /dev/null
        +++ b/link
        @@ -0,0 +1 @@
        +{target}
        \\ No newline at end of file
        diff --git a/link/evil.txt b/link/evil.txt
        new file mode 100644
        --- /dev/null
        +++ b/link/evil.txt
        @@ -0,0 +1 @@
        +pwned
        """
    )
    result = sandbox.apply_patch(via_link)
    assert not result.applied
    assert list(target.iterdir()) == []
    assert not (sandbox.root / "link").exists()


def test_a_failing_patch_applies_nothing(sandbox: Sandbox) -> None:
    half_good = textwrap.dedent(
        """\
        --- a/pkg/calc.py
        +++ b/pkg/calc.py
        @@ -1,2 +1,2 @@
         def add(a, b):
        -    return a - b
        +    return a + b
        --- a/test_calc.py
        +++ b/test_calc.py
        @@ -1,1 +1,1 @@
        -this line is not in the file
        +whatever
        """
    )
    result = sandbox.apply_patch(half_good)
    assert not result.applied and result.message
    assert sandbox.diff() == ""


async def test_a_test_added_by_a_patch_runs_contained(sandbox: Sandbox, original: Path) -> None:
    patch = textwrap.dedent(
        f"""\
        --- /dev/null
        +++ b/test_escape.py
        @@ -0,0 +1,3 @@
        +def test_escape():
        +    with open({str(original / "pwned.txt")!r}, "w") as f:
        +        f.write("pwned")
        """
    )
    assert sandbox.apply_patch(patch).applied
    result = await sandbox.run([PY, "-c", "import test_escape; test_escape.test_escape()"])
    assert result.returncode != 0
    assert not (original / "pwned.txt").exists()


async def test_no_network_connection(sandbox: Sandbox) -> None:
    connections: list[int] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    probe_cmd = [
        PY,
        "-c",
        f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5); print('ok')",
    ]
    async with server:
        blocked = await sandbox.run(probe_cmd, timeout_s=20)
        assert blocked.returncode != 0 and "ok" not in blocked.stdout
        assert connections == []
        # positive control: with the network allowed the same command connects
        allowed = await sandbox.run(probe_cmd, timeout_s=20, network=True)
        assert allowed.returncode == 0 and allowed.stdout.strip() == "ok", allowed.stderr
        assert allowed.notes == ("sandbox: network allowed for this command",)
    assert connections == [1]


async def test_forks_are_bounded(sandbox: Sandbox) -> None:
    script = textwrap.dedent(
        """\
        import os, time
        n = 0
        try:
            for _ in range(500):
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                n += 1
        except OSError as e:
            print("refused after", n, flush=True)
            raise
        print("forked", n)
        """
    )
    result = await sandbox.run([PY, "-c", script], max_processes=16, timeout_s=30)
    assert "refused after" in result.stdout, result.stdout + result.stderr
    assert int(result.stdout.split()[-1]) < 16
    assert result.limit_hit == "processes"
    assert sandbox.uid is not None and processes_of(sandbox.uid) == []


async def test_a_fork_bomb_is_bounded_and_killed(sandbox: Sandbox) -> None:
    # orphans keep forking while the shell waits; the command's cgroup bounds them
    # all; it ends at the deadline, or earlier when even its last sleep cannot fork
    bomb = "bomb() { bomb | bomb & }; bomb; sleep 1000"
    result = await sandbox.run(bomb, max_processes=12, timeout_s=2)
    assert result.limit_hit in ("time", "processes") and result.returncode != 0
    assert sandbox.uid is not None and processes_of(sandbox.uid) == []


async def test_a_command_that_never_ends_is_killed_with_its_children(sandbox: Sandbox) -> None:
    script = "trap '' TERM; setsid sleep 1000 & (sleep 1000 &); sleep 1000"
    result = await sandbox.run(script, timeout_s=0.5)
    assert result.timed_out and result.limit_hit == "time"
    assert result.returncode < 0
    assert sandbox.uid is not None and processes_of(sandbox.uid) == []


async def test_memory_is_limited(sandbox: Sandbox) -> None:
    result = await sandbox.run([PY, "-c", "b = bytearray(3 * 1024**3)"], memory_mb=256)
    assert result.returncode != 0 and result.limit_hit == "memory"
    # positive control: a small allocation under the same limit works
    small = await sandbox.run([PY, "-c", "b = bytearray(16 * 1024**2)"], memory_mb=256)
    assert small.returncode == 0, small.stderr


async def test_runaway_output_is_capped_and_stopped(sandbox: Sandbox) -> None:
    result = await sandbox.run("yes fixbugs", max_output_bytes=10_000, timeout_s=30)
    assert result.limit_hit == "output" and result.truncated
    assert len(result.stdout) < 11_000
    assert result.stdout.startswith("fixbugs\n") and "bytes of output dropped" in result.stdout


async def test_fork_is_independent_and_close_cleans_up(sandbox: Sandbox, original: Path) -> None:
    patch = (
        "--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -2 +2 @@\n-    return a - b\n+    return a + b\n"
    )
    with sandbox.fork() as child:
        assert child.root != sandbox.root and child.uid != sandbox.uid
        assert child.apply_patch(patch).applied
        assert "+    return a + b" in child.diff()
        ok = await child.run([PY, "-c", "from pkg.calc import add; assert add(2, 2) == 4"])
        assert ok.returncode == 0, ok.stderr
        base = child.base
    assert not base.exists()
    assert sandbox.diff() == ""
    assert not (sandbox.root / ".git").exists()
    assert (original / ".git" / "HEAD").exists()


@pytest.mark.skipif(
    not Path.home().joinpath(".pyenv/versions").is_dir(), reason="no pyenv interpreters here"
)
async def test_an_interpreter_under_roots_home_is_usable_when_named(
    original: Path, tmp_path: Path
) -> None:
    interpreter = next(Path.home().joinpath(".pyenv/versions").glob("3.*/bin/python3"))
    argv = [str(interpreter), "-c", "import sys; print(sys.version_info[0])"]
    with Sandbox.create(
        original, base_dir=tmp_path, readonly_paths=interpreter_paths(interpreter)
    ) as named:
        result = await named.run(argv)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "3"
    # without naming it, /root is empty in the sandbox
    with Sandbox.create(original, base_dir=tmp_path) as hidden:
        result = await hidden.run(argv)
        assert result.returncode == 127 and "No such file" in result.stderr
