"""Limits bind the whole command, and hitting one is said by name.

Issue 14 saw four processes hold 800 MB each under a "1024 MB" limit (an
rlimit binds each process alone), three 500 MB files accepted, and a
file-size cap hit silently. Here the same attacks run, scaled down so the
suite stays quick: the limit is what the test sets, not the machine's.
"""

from __future__ import annotations

from pathlib import Path

from hostile import NEEDS_CGROUPS, NEEDS_NAMESPACES, NEEDS_TMPFS, PY, hostile, open_sandbox

from fixbugs.sandbox import Sandbox

pytestmark = NEEDS_NAMESPACES

FOUR_HOGS = """
import subprocess, sys

HOG = "import time; b = b'x' * (150 << 20); print('held', flush=True); time.sleep(5)"
kids = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(4)]
codes = [k.wait() for k in kids]
print("codes", codes, flush=True)
sys.exit(1 if any(c != 0 for c in codes) else 0)
"""


@NEEDS_CGROUPS
async def test_memory_is_bounded_for_the_whole_command(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    sb = open_sandbox(hostile(tmp_path, "def test_x():\n    pass\n"), tmp_path)
    sandboxes.append(sb)
    # each hog (150 MB) fits the per-process limit; four together do not fit 256 MB
    result = await sb.run([PY, "-c", FOUR_HOGS], memory_mb=256, timeout_s=60)
    assert result.limit_hit == "memory", result.stdout + result.stderr
    assert any(n.startswith("limit hit: memory") for n in result.notes), result.notes
    assert "-9" in result.stdout  # the kernel killed at least one hog


@NEEDS_CGROUPS
async def test_processes_are_bounded_for_the_whole_command(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    sb = open_sandbox(hostile(tmp_path, "def test_x():\n    pass\n"), tmp_path)
    sandboxes.append(sb)
    script = "for i in $(seq 40); do sleep 3 & done; wait"
    result = await sb.run(script, max_processes=20, timeout_s=30)
    assert result.limit_hit == "processes", result.stdout + result.stderr
    assert any(n.startswith("limit hit: processes") for n in result.notes)


@NEEDS_TMPFS
async def test_disk_is_bounded_and_said(tmp_path: Path, sandboxes: list[Sandbox]) -> None:
    sb = open_sandbox(hostile(tmp_path, "def test_x():\n    pass\n"), tmp_path, disk_mb=32)
    sandboxes.append(sb)
    # three 16 MB files into a copy allowed 32 MB more than the repository
    script = "for i in 1 2 3; do head -c 16777216 /dev/zero > big$i || exit 1; done"
    result = await sb.run(script, timeout_s=60)
    assert result.limit_hit == "disk", result.stdout + result.stderr
    assert any("limit hit: disk" in n and "32 MB" in n for n in result.notes), result.notes
    written = sum(p.stat().st_size for p in sb.root.glob("big*"))
    assert written < 3 * (16 << 20)  # the third file did not fit


async def test_the_file_size_cap_is_said(tmp_path: Path, sandboxes: list[Sandbox]) -> None:
    sb = open_sandbox(hostile(tmp_path, "def test_x():\n    pass\n"), tmp_path)
    sandboxes.append(sb)
    script = "with open('big', 'wb') as f:\n    f.write(b'x' * (8 << 20))\n"
    result = await sb.run([PY, "-c", script], max_file_mb=4, timeout_s=60)
    assert result.limit_hit == "file_size", result.stdout + result.stderr
    assert any(n.startswith("limit hit: file_size") for n in result.notes)
    assert (sb.root / "big").stat().st_size <= 4 << 20
