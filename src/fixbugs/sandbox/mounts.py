"""The copy's size-limited tmpfs, and cleaning up after a process that died.

A sandbox's copy lives on a tmpfs of a fixed size, so commands cannot fill
the host's disk. The mount is in the host's mount namespace (it must
outlive each command), so a process killed before :meth:`Sandbox.close`
would leave it behind; each sandbox records its owner (pid and start
time), and the first sandbox a process makes in a folder unmounts and
deletes those whose owner is gone.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path

from fixbugs.sandbox.hosttools import run_tool
from fixbugs.sandbox.owners import owner_alive, owner_mark
from fixbugs.sandbox.untrusted import remove_tree

__all__ = ["SOURCE", "mark_owner", "mount_tmpfs", "sweep_stale", "unmount"]

SOURCE = "fixbugs-copy"  # the tmpfs "device" name that marks our mounts
_OWNER = "owner"
_MOUNT_S = 60.0  # mount(8) and umount(8) of a tmpfs answer at once, or hang
_swept: set[Path] = set()
_lock = threading.Lock()


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
    done = run_tool(["mount", "-t", "tmpfs", "-o", opts, SOURCE, str(where)], timeout_s=_MOUNT_S)
    if not done.ok:
        raise RuntimeError(f"could not mount the copy's tmpfs at {where}: {done.said()}")


def unmount(where: Path) -> None:
    run_tool(["umount", "-l", str(where)], timeout_s=_MOUNT_S)


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


def sweep_stale(parent: Path) -> list[Path]:
    """Delete the sandboxes whose owning process is gone (once per process and ``parent``).

    Those still mounted anywhere, and those in ``parent`` that a process
    killed in the middle of closing left unmounted. A sandbox with no owner
    file yet may be one another process is making now: it is left alone.
    """
    with _lock:
        if parent in _swept:
            return []
        _swept.add(parent)
    mounted = {m.parent for m in _our_mounts() if m.name == "repo"}
    try:
        here = set(parent.glob("fixbugs-sandbox-*"))
    except OSError:
        here = set()
    gone = []
    for base in sorted(mounted | here):
        if not base.name.startswith("fixbugs-sandbox-") or not (base / _OWNER).exists():
            continue
        if _owner_alive(base):
            continue
        if base in mounted:
            unmount(base / "repo")
        with contextlib.suppress(OSError):
            remove_tree(base)
        gone.append(base)
    return gone
