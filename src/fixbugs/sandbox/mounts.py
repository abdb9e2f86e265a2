"""The copy's size-limited tmpfs, and cleaning up after a process that died.

A sandbox's copy lives on a tmpfs of a fixed size, so commands cannot fill
the host's disk. The mount is in the host's mount namespace (it must
outlive each command), so a process killed before :meth:`Sandbox.close`
would leave it behind; each sandbox records its owner (pid and start
time), and the first sandbox a process makes unmounts and deletes those
whose owner is gone.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import threading
from pathlib import Path

from fixbugs.sandbox.owners import owner_alive, owner_mark

__all__ = ["SOURCE", "mark_owner", "mount_tmpfs", "sweep_stale", "unmount"]

SOURCE = "fixbugs-copy"  # the tmpfs "device" name that marks our mounts
_OWNER = "owner"
_swept = threading.Event()


def mark_owner(base: Path) -> None:
    (base / _OWNER).write_text(owner_mark())


def _owner_alive(base: Path) -> bool:
    try:
        return owner_alive((base / _OWNER).read_text())
    except OSError:
        return False


def mount_tmpfs(where: Path, size: int) -> None:
    """A tmpfs of ``size`` bytes at ``where``: the copy cannot grow past it."""
    opts = f"size={size},mode=0755,nosuid,nodev"
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", opts, SOURCE, str(where)], capture_output=True, check=False
    )
    if done.returncode != 0:
        err = done.stderr.decode(errors="replace").strip()
        raise RuntimeError(f"could not mount the copy's tmpfs at {where}: {err}")


def unmount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True, check=False)


def _our_mounts() -> list[Path]:
    out: list[Path] = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        pre, _, post = line.partition(" - ")
        fields, post_f = pre.split(), post.split()
        if len(fields) > 4 and len(post_f) > 1 and post_f[0] == "tmpfs" and post_f[1] == SOURCE:
            out.append(Path(fields[4].replace("\\040", " ")))
    return out


def sweep_stale() -> list[Path]:
    """Unmount and delete sandboxes whose owning process is gone (once per process)."""
    if _swept.is_set():
        return []
    _swept.set()
    gone = []
    for mount in _our_mounts():
        base = mount.parent
        if mount.name != "repo" or not base.name.startswith("fixbugs-sandbox-"):
            continue
        if _owner_alive(base):
            continue
        unmount(mount)
        with contextlib.suppress(OSError):
            shutil.rmtree(base, ignore_errors=True)
        gone.append(base)
    return gone
