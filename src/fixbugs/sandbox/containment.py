"""How a command is contained on this machine.

:func:`probe` finds out once which mechanisms the OS grants;
:func:`wrap` turns a command into the argv that runs it contained. ``wrap``
is pure (no I/O), so what a sandboxed command really executes is testable
as data. Running as root (a container, CI), a command runs:

* in new mount, PID and network namespaces (``unshare``): it sees no
  network interface but a downed loopback, every process it starts dies
  with it, and ``/`` is remounted read-only with only the sandbox's own
  directory writable; ``/tmp``, ``/var/tmp``, ``/dev/shm`` become private
  tmpfs (or read-only when the sandbox lives under them);
* as an unprivileged uid of its own (``setpriv``) that owns only the copy,
  so file permissions stop writes elsewhere and ``RLIMIT_NPROC`` bounds its
  processes (that limit never binds root);
* under rlimits (``prlimit``): address space, processes, CPU, file size.

The uid keeps one capability, ``CAP_DAC_READ_SEARCH``: it may *read*
anything (an interpreter in a venv under ``/root/.cache``, which mode 0700
on ``/root`` would otherwise hide), never write. Without root, commands run
as the current user under rlimits only, and the notes say so.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbugs.sandbox.limits import Limits

__all__ = ["Mechanisms", "probe", "wrap"]

# Directories any user may write to; inside the namespace they are replaced.
WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")

# Runs as root inside the new namespaces, then drops to the sandbox uid.
# $1 = sandbox base dir, $2 = working dir; the rest is the command.
_SETUP = r"""set -e
base="$1"; work="$2"; shift 2
ro=""
for w in __WORLD__; do
  [ -d "$w" ] || continue
  case "$base/" in
    "$w"/*) mount --bind "$w" "$w"; ro="$ro $w" ;;
    *) mount -t tmpfs -o mode=1777,size=64m,nosuid,nodev tmpfs "$w" ;;
  esac
done
mount --bind "$base" "$base"
for w in $ro; do mount -o remount,bind,ro "$w"; done
mount -o remount,bind,ro /
cd "$work"
exec "$@"
""".replace("__WORLD__", " ".join(WORLD_WRITABLE))


@dataclass(frozen=True)
class Mechanisms:
    """Which containment mechanisms this process can use."""

    root: bool
    namespaces: bool
    setpriv: bool
    prlimit: bool

    @property
    def separate_uid(self) -> bool:
        return self.root and self.setpriv

    def notes(self, *, network: bool) -> tuple[str, ...]:
        """One line per missing mechanism, for every result to carry."""
        out: list[str] = []
        if not self.separate_uid:
            out.append(
                "sandbox: commands run as the current user (needs root and setpriv); "
                "writes outside the copy are not prevented and the process limit is per user"
            )
        if not self.namespaces:
            out.append(
                "sandbox: no mount/pid/net namespaces (needs root and unshare); "
                "the network is not isolated and a daemonized child may outlive the command"
            )
        if not self.prlimit:
            out.append("sandbox: prlimit missing; memory, process and file-size limits not applied")
        if network and self.namespaces:
            out.append("sandbox: network allowed for this command")
        return tuple(out)


def wrap(
    argv: Sequence[str],
    *,
    limits: Limits,
    mechanisms: Mechanisms,
    uid: int | None,
    base: Path,
    workdir: Path,
    network: bool = False,
) -> list[str]:
    """The argv that runs ``argv`` contained; ``base`` is the only writable tree."""
    out: list[str] = []
    if mechanisms.namespaces:
        out += ["unshare", "--fork", "--pid", "--mount-proc", "--kill-child", "--mount"]
        out += ["--propagation", "private"]
        if not network:
            out.append("--net")
        out += ["--", "/bin/sh", "-c", _SETUP, "sandbox-setup", str(base), str(workdir)]
    if mechanisms.separate_uid and uid is not None:
        cap = "dac_read_search"
        out += [
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--no-new-privs",
            f"--inh-caps=-all,+{cap}",
            f"--ambient-caps=+{cap}",
            f"--bounding-set=-all,+{cap}",
            "--",
        ]
    if mechanisms.prlimit:
        mem = limits.memory_mb * 1024 * 1024
        fsize = limits.max_file_mb * 1024 * 1024
        out += [
            "prlimit",
            f"--as={mem}:{mem}",
            f"--nproc={limits.max_processes}:{limits.max_processes}",
            f"--cpu={limits.cpu_s}:{limits.cpu_s}",
            f"--fsize={fsize}:{fsize}",
            "--core=0:0",
            "--",
        ]
    return [*out, *argv]


@functools.cache
def probe() -> Mechanisms:
    """Find out once which mechanisms work here, by running the real wrapper."""
    root = os.geteuid() == 0
    has_setpriv = shutil.which("setpriv") is not None
    has_prlimit = shutil.which("prlimit") is not None
    namespaces = False
    if root and shutil.which("unshare") is not None:
        candidate = Mechanisms(root=root, namespaces=True, setpriv=False, prlimit=False)
        with tempfile.TemporaryDirectory(prefix="fixbugs-probe-") as tmp:
            base = Path(tmp).resolve()
            argv = wrap(
                ["/bin/true"],
                limits=Limits(),
                mechanisms=candidate,
                uid=None,
                base=base,
                workdir=base,
            )
            try:
                done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
                namespaces = done.returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                namespaces = False
    return Mechanisms(root=root, namespaces=namespaces, setpriv=has_setpriv, prlimit=has_prlimit)
