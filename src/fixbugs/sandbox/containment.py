"""How a command is contained on this machine.

:func:`probe` finds out once which mechanisms the OS grants;
:func:`wrap` turns a command into the argv that runs it contained. ``wrap``
is pure (no I/O), so what a sandboxed command really executes is testable
as data. Running as root (a container, CI), a command runs:

* in a cgroup of its own (:mod:`fixbugs.sandbox.cgroups`) that bounds the
  memory, processes and CPU of the whole command, not of each process;
* in new mount, PID, IPC, UTS and network namespaces (``bwrap``): no
  network but a loopback of its own, every process it starts dies with it;
* on a root filesystem built for it (``bwrap``'s tmpfs root): the system
  directories read-only, its own copy writable, the extra directories the
  caller named (the test interpreter's venv and prefix) read-only, and
  private empty ``/tmp``, ``/var/tmp``, ``/dev/shm``, ``HOME`` and
  ``TMPDIR``. Nothing else of the host exists there: ``/root``, ``/home``,
  other sandboxes and the service workspace are not mounted at all. Files
  the caller names are bound read-only over system files, in this mount
  namespace only (the sandbox uid's ``/etc/passwd`` and ``/etc/group``,
  :mod:`fixbugs.sandbox.identity`);
* as an unprivileged uid of its own (``setpriv``) with *no* capability
  (empty bounding set, ``no_new_privs``): file permissions apply to it, so
  ``/etc/shadow`` is unreadable, and ``open_by_handle_at`` (which needs
  ``CAP_DAC_READ_SEARCH``) fails with ``EPERM``;
* in a user namespace of its own where the kernel allows one, entered
  *after* dropping to that uid (mapping only that uid to itself): whatever
  capability it could ever regain would be one of that namespace, never of
  the host's;
* under rlimits (``prlimit``): address space, processes, CPU, file size.

Without root, commands run as the current user under rlimits only, and
every result's notes say so.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fixbugs.sandbox.cgroups import CgroupSupport, detect_cgroups
from fixbugs.sandbox.hosttools import run_tool
from fixbugs.sandbox.interpreters import SYSTEM_DIRS
from fixbugs.sandbox.limits import Limits

__all__ = ["Confinement", "Mechanisms", "View", "probe", "wrap"]

_PROBE_UID = 1_499_999_999  # below the sandbox uid range, never a real user
# Moves this shell into the command's cgroups, then execs the command.
# Fails closed: a command that cannot join its cgroup does not run.
_JOIN_CGROUP = (
    'IFS=:; for f in $1; do echo $$ > "$f" || { echo "sandbox: cannot join $f" >&2; exit 125; }; '
    'done; unset IFS; shift; exec "$@"'
)


@dataclass(frozen=True)
class View:
    """What a namespaced command sees besides the system directories.

    Every path appears at its host path: ``writable`` bound read-write,
    ``private`` as a fresh tmpfs of this command alone, ``readonly`` bound
    read-only. A path that does not exist is left out. ``files`` are
    (host file, path in the sandbox) pairs bound read-only over what the
    system directories show there.
    """

    writable: tuple[Path, ...] = ()
    private: tuple[Path, ...] = ()
    readonly: tuple[Path, ...] = ()
    files: tuple[tuple[Path, Path], ...] = ()
    tmp_bytes: int = 256 << 20


@dataclass(frozen=True)
class Mechanisms:
    """Which containment mechanisms this process can use."""

    root: bool
    namespaces: bool
    setpriv: bool
    prlimit: bool
    cgroups: CgroupSupport | None = field(default=None, compare=False)
    copy_tmpfs: bool = False
    userns: bool = False

    @property
    def separate_uid(self) -> bool:
        return self.root and self.setpriv

    def notes(self, *, network: bool) -> tuple[str, ...]:
        """One line per missing mechanism, for every result to carry."""
        out: list[str] = []
        if not self.separate_uid:
            out.append(
                "sandbox: commands run as the current user (needs root and setpriv); "
                "writes and reads outside the copy are not prevented and the process "
                "limit is per user"
            )
        if not self.namespaces:
            out.append(
                "sandbox: no mount/pid/net namespaces (needs root and bubblewrap); the host "
                "filesystem and network are not hidden and a daemonized child may outlive "
                "the command"
            )
        if not self.prlimit:
            out.append("sandbox: prlimit missing; per-process memory and file-size limits off")
        if self.cgroups is None:
            out.append(
                "sandbox: no cgroup (needs root and the memory and pids controllers); "
                "memory and process limits apply per process, not to the whole command"
            )
        if self.separate_uid and self.namespaces and not self.userns:
            out.append("sandbox: no user namespace (the kernel refused one); uid and caps only")
        if not self.copy_tmpfs:
            out.append(
                "sandbox: the copy is not on a size-limited tmpfs (needs root); disk unbounded"
            )
        if network and self.namespaces:
            out.append("sandbox: network allowed for this command")
        return tuple(out)


@dataclass(frozen=True)
class Confinement:
    """How one command is contained: its limits, the mechanisms, its uid, what it sees.

    The one parameter object of :func:`wrap` and of the runners
    (:func:`fixbugs.sandbox.runner.run_contained` and ``run_contained_sync``):
    the command runs in ``workdir`` as ``uid`` (None: the current user), with
    ``base`` (the sandbox's own folder) writable unless ``view`` says what
    it sees, and without a network unless ``network``.
    """

    limits: Limits
    mechanisms: Mechanisms
    uid: int | None
    base: Path
    workdir: Path
    network: bool = False
    view: View | None = None


def wrap(argv: Sequence[str], how: Confinement, *, cgroup_procs: Sequence[str] = ()) -> list[str]:
    """The argv that runs ``argv`` contained as ``how`` says.

    With namespaces, ``how.view`` says what the command sees (default: only
    ``how.base`` writable); ``cgroup_procs`` are the ``cgroup.procs`` files the
    command joins before anything else runs.
    """
    limits, mechanisms, uid = how.limits, how.mechanisms, how.uid
    out: list[str] = []
    if cgroup_procs:
        out += ["/bin/sh", "-c", _JOIN_CGROUP, "join-cgroup", ":".join(cgroup_procs)]
    if mechanisms.namespaces:
        view = how.view or View(writable=(how.base,))
        out += _namespaced(view, workdir=how.workdir, network=how.network)
    if mechanisms.separate_uid and uid is not None:
        out += [
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--no-new-privs",
            "--inh-caps=-all",
            "--ambient-caps=-all",
            "--bounding-set=-all",
            "--",
        ]
        if mechanisms.userns:
            out += ["unshare", "--user", "--map-current-user", "--"]
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


def _namespaced(view: View, *, workdir: Path, network: bool) -> list[str]:
    """``bwrap``'s argv: new namespaces and a root of the view's paths alone.

    One process builds every mount (the shell script it replaced ran about
    forty ``mount``/``mkdir`` processes per command). bwrap runs as root and
    keeps its capabilities for the ``setpriv`` after it, which drops them.
    """
    tmp = str(view.tmp_bytes)
    out = ["bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if not network:
        out.append("--unshare-net")
    out += ["--die-with-parent", "--new-session"]
    for d in SYSTEM_DIRS:
        out += ["--ro-bind-try", d, d]
    for source, dest in view.files:
        out += ["--ro-bind", str(source), str(dest)]
    out += ["--proc", "/proc", "--ro-bind", "/sys", "/sys", "--dev", "/dev"]
    for t in ("/tmp", "/var/tmp", "/dev/shm"):
        out += _tmpfs(t, tmp)
    out += _binds("--bind-try", view.writable)
    for p in view.private:
        out += _tmpfs(str(p), tmp)
    out += _binds("--ro-bind-try", view.readonly)
    out += ["--remount-ro", "/", "--chdir", str(workdir), "--"]
    return out


def _tmpfs(path: str, size: str) -> list[str]:
    # bwrap's tmpfs is owned by root: world-writable and sticky like /tmp,
    # which is safe because only this command's processes can see it.
    return ["--size", size, "--perms", "1777", "--tmpfs", path]


def _binds(kind: str, paths: Sequence[Path]) -> list[str]:
    # bwrap would make a bind's missing parents 0700, which the sandbox uid
    # cannot traverse: make them first, 0755. Parents are bound before children.
    out: list[str] = []
    for p in sorted(paths, key=lambda p: len(p.parts)):
        if p.parent != p:
            out += ["--dir", str(p.parent)]
        out += [kind, str(p), str(p)]
    return out


def _mount_tmpfs_works(root: bool) -> bool:
    """Whether this process can mount a tmpfs (for the size-limited copy)."""
    if not root or shutil.which("mount") is None or shutil.which("umount") is None:
        return False
    with tempfile.TemporaryDirectory(prefix="fixbugs-probe-") as tmp:
        done = run_tool(
            ["mount", "-t", "tmpfs", "-o", "size=1m", "fixbugs-probe", tmp], timeout_s=30
        )
        if not done.ok:
            return False
        run_tool(["umount", "-l", tmp], timeout_s=30)
        return True


@functools.cache
def probe() -> Mechanisms:
    """Find out once which mechanisms work here, by running the real wrapper."""
    root = os.geteuid() == 0
    has_setpriv = shutil.which("setpriv") is not None
    has_prlimit = shutil.which("prlimit") is not None
    namespaces = userns = False
    if root and shutil.which("bwrap") is not None:
        candidate = Mechanisms(root=root, namespaces=True, setpriv=False, prlimit=False)
        with tempfile.TemporaryDirectory(prefix="fixbugs-probe-") as tmp:
            base = Path(tmp).resolve()
            argv = wrap(["/bin/true"], Confinement(Limits(), candidate, None, base, base))
            namespaces = run_tool(argv, timeout_s=30).ok
        userns = has_setpriv and _userns_works()
    return Mechanisms(
        root=root,
        namespaces=namespaces,
        setpriv=has_setpriv,
        prlimit=has_prlimit,
        cgroups=detect_cgroups() if root else None,
        copy_tmpfs=_mount_tmpfs_works(root),
        userns=userns,
    )


def _userns_works() -> bool:
    """Whether an unprivileged uid may enter a user namespace of its own here."""
    mechanisms = Mechanisms(root=True, namespaces=False, setpriv=True, prlimit=False, userns=True)
    argv = wrap(["/bin/true"], Confinement(Limits(), mechanisms, _PROBE_UID, Path("/"), Path("/")))
    return run_tool(argv, timeout_s=30, cwd="/").ok
