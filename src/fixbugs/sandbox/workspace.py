"""A disposable copy of the user's repository that commands run in.

The agent never touches the user's tree: :meth:`Sandbox.create` copies it
into a fresh directory owned by a uid of its own (on a size-limited tmpfs
where the OS allows), keeps a pristine copy (:attr:`Sandbox.baseline`) and
a git baseline *outside* what commands can see (so :meth:`Sandbox.diff`
reports exactly what changed, new files included), and every command and
patch runs contained (see :mod:`fixbugs.sandbox.containment`). Forks copy
the pristine original, never a copy a test has run in; of such a copy they
get only the bytecode :meth:`Sandbox.keep_bytecode` kept, each file checked
against the pristine source it was compiled from (:mod:`fixbugs.sandbox.bytecode`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentrt import Clock, SystemClock
from fixbugs.errors import InputError
from fixbugs.sandbox import patching
from fixbugs.sandbox.bytecode import forget, keep_for_forks, kept_bytes, restore
from fixbugs.sandbox.containment import Confinement, Mechanisms, View, probe
from fixbugs.sandbox.executor import ClosedOnExit, command_environment
from fixbugs.sandbox.hosttools import ToolRun
from fixbugs.sandbox.identity import Identity, write_identity
from fixbugs.sandbox.interpreters import is_system_path
from fixbugs.sandbox.limits import CommandResult, Limits
from fixbugs.sandbox.mounts import mark_owner, mount_tmpfs, sweep_stale, unmount
from fixbugs.sandbox.runner import run_contained, run_contained_sync
from fixbugs.sandbox.snapshot import TreeStore
from fixbugs.sandbox.trees import chown_tree, ignore_noise, kill_uid, tree_bytes
from fixbugs.sandbox.untrusted import remove_tree

__all__ = ["DEFAULT_DISK_MB", "Sandbox"]

# Sandbox uids come from a range no distribution assigns to real users.
_UID_LOW, _UID_SPAN = 1_500_000_000, 100_000_000
DEFAULT_DISK_MB = 1024


class Sandbox(ClosedOnExit):
    """A temporary copy of a repository, with contained command execution.

    Use it as a context manager, or call :meth:`close`; both delete the
    copy. Each :meth:`run` has its own cgroup; concurrent runs share the
    copy and the uid. :meth:`fork` gives an independent copy of the original.
    """

    def __init__(
        self,
        base: Path,
        *,
        uid: int | None,
        mechanisms: Mechanisms,
        clock: Clock,
        readonly_paths: Sequence[Path] = (),
        baseline: Path | None = None,
        disk_mb: int = DEFAULT_DISK_MB,
        bytecode: Path | None = None,
    ) -> None:
        self.base = base
        self.readonly_paths = tuple(readonly_paths)
        self.root = base / "repo"
        self.uid = uid
        self.mechanisms = mechanisms
        self.clock = clock
        self.disk_mb = disk_mb
        # The pristine tree: never mounted into a sandbox, never run in.
        self.baseline = baseline or base / "pristine"
        self._owns_baseline = baseline is None
        # the reproduction's compiled modules, beside the pristine tree (keep_bytecode)
        self._bytecode = bytecode or base / "bytecode"
        self._trees = TreeStore(base / "baseline.git", scratch=base)
        self._tmpfs = False
        self.identity: Identity | None = None  # the uid's passwd entry, where binds work

    # --- lifecycle -----------------------------------------------------------

    @classmethod
    def create(
        cls,
        repo_root: Path,
        *,
        base_dir: Path | None = None,
        clock: Clock | None = None,
        readonly_paths: Sequence[Path] = (),
        disk_mb: int = DEFAULT_DISK_MB,
    ) -> Sandbox:
        """Copy ``repo_root`` into a new sandbox under ``base_dir`` (default: the temp dir).

        ``readonly_paths`` are extra directories the commands need to see,
        read-only (the test interpreter's venv and its base prefix, even under
        ``/root``); everything else outside the system directories is hidden.
        :func:`interpreter_paths` lists them for a Python interpreter.
        ``disk_mb`` is what commands may add to the copy (a tmpfs of the
        copy's size plus this, where the OS allows mounting one).

        This copies a tree and blocks; from async code call it via ``asyncio.to_thread``.
        """
        src = Path(repo_root).expanduser()
        if not src.is_dir():
            raise InputError(f"repository {src} is not a directory; give the path of its work tree")
        return cls._from_tree(
            src,
            base_dir=base_dir,
            clock=clock or SystemClock(),
            parent=None,
            readonly_paths=tuple(Path(p) for p in readonly_paths),
            baseline=None,
            disk_mb=disk_mb,
            bytecode=None,
        )

    @classmethod
    def _from_tree(
        cls,
        src: Path,
        *,
        base_dir: Path | None,
        clock: Clock,
        parent: TreeStore | None,
        readonly_paths: tuple[Path, ...],
        baseline: Path | None,
        disk_mb: int,
        bytecode: Path | None,
    ) -> Sandbox:
        mechanisms = probe()
        base = Path(tempfile.mkdtemp(prefix="fixbugs-sandbox-", dir=base_dir)).resolve()
        uid = _UID_LOW + secrets.randbelow(_UID_SPAN) if mechanisms.separate_uid else None
        sandbox = cls(
            base,
            uid=uid,
            mechanisms=mechanisms,
            clock=clock,
            readonly_paths=readonly_paths,
            baseline=baseline,
            disk_mb=disk_mb,
            bytecode=bytecode,
        )
        try:
            # without namespaces the sandbox uid reaches its copy through base
            os.chmod(base, 0o700 if mechanisms.namespaces else 0o711)
            if mechanisms.copy_tmpfs:
                mark_owner(base)  # first: until then, a sweep cannot tell whose it is
                sweep_stale(base.parent)
                size = tree_bytes(src) + kept_bytes(sandbox._bytecode) + disk_mb * 1024 * 1024
                sandbox.root.mkdir()
                mount_tmpfs(sandbox.root, size)
                sandbox._tmpfs = True
            shutil.copytree(
                src, sandbox.root, symlinks=True, ignore=ignore_noise, dirs_exist_ok=True
            )
            if sandbox._owns_baseline:
                shutil.copytree(src, sandbox.baseline, symlinks=True, ignore=ignore_noise)
                os.chmod(sandbox.baseline, 0o700)
            else:
                restore(sandbox._bytecode, sandbox.root)
            for extra in ("tmp", "home"):
                (base / extra).mkdir()
            if uid is not None and mechanisms.namespaces:
                sandbox.identity = write_identity(base / "etc", uid=uid, home=base / "home")
            if parent is None:
                sandbox._trees.record_baseline(sandbox.root)
            else:
                sandbox._trees.borrow(parent)
            if uid is not None:
                for owned in (sandbox.root, base / "tmp", base / "home"):
                    chown_tree(owned, uid)
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    def containment(self) -> tuple[str, ...]:
        """The probed mechanisms' missing ones, as every command's result notes them."""
        return self.mechanisms.notes(network=False)

    def fork(self) -> Sandbox:
        """A fresh, independent copy of the pristine original; its diff is against it too.

        Never a copy of this copy: a test that ran here may have rewritten
        it, and what a later stage reads or validates must not carry that.
        The fork reads its baseline (the pristine tree, its git objects) from this
        sandbox, so close it first.
        """
        return type(self)._from_tree(
            self.baseline,
            base_dir=self.base.parent,
            clock=self.clock,
            parent=self._trees,
            readonly_paths=self.readonly_paths,
            baseline=self.baseline,
            disk_mb=self.disk_mb,
            bytecode=self._bytecode,
        )

    def keep_bytecode(self) -> str:
        """Keep the bytecode the copy's runs compiled for the pristine sources, for the forks
        made from now on (:mod:`fixbugs.sandbox.bytecode`); a line saying what was kept."""
        return keep_for_forks(self._owns_baseline, self.root, self.baseline, self._bytecode)

    def close(self) -> None:
        """Kill anything left of the sandbox uid, unmount and delete the copy.

        The deletion follows no link the tests left in the copy
        (:func:`~fixbugs.sandbox.untrusted.remove_tree`, descriptor-based).
        """
        if self.uid is not None:
            kill_uid(self.uid)
        if self._tmpfs:
            unmount(self.root)
            self._tmpfs = False
        remove_tree(self.base)

    # --- commands ------------------------------------------------------------

    def environment(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """The command's environment (:func:`command_environment`), its user, HOME and TMPDIR."""
        return command_environment(
            {
                "HOME": str(self.base / "home"),
                "TMPDIR": str(self.base / "tmp"),
                **(self.identity.environment() if self.identity else {}),
                **(env or {}),
            }
        )

    async def run(
        self,
        cmd: str | Sequence[str],
        *,
        timeout_s: float = 60,
        memory_mb: int = 1024,
        max_output_bytes: int = 1_000_000,
        max_processes: int = 256,
        env: Mapping[str, str] | None = None,
        network: bool = False,
        max_file_mb: int = 1024,
    ) -> CommandResult:
        """Run ``cmd`` in the copy; a string runs through ``/bin/sh -c``."""
        argv = ["/bin/sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        if not argv:
            raise ValueError("empty command")
        limits = Limits(
            timeout_s=timeout_s,
            memory_mb=memory_mb,
            max_output_bytes=max_output_bytes,
            max_processes=max_processes,
            max_file_mb=max_file_mb,
        )
        return await run_contained(
            argv,
            self.confinement(limits, network=network),
            env=self.environment(env),
            clock=self.clock,
            disk=self.root if self._tmpfs else None,
            disk_mb=self.disk_mb if self._tmpfs else None,
        )

    def confinement(self, limits: Limits, *, network: bool = False) -> Confinement:
        """How a command of this sandbox runs: as its uid, in its copy, seeing its view."""
        view = self.view(limits)
        return Confinement(limits, self.mechanisms, self.uid, self.base, self.root, network, view)

    def view(self, limits: Limits) -> View:
        """What a command sees: its copy, private HOME and TMPDIR, the read-only extras, its user.

        An extra that holds this sandbox (``/``, ``/tmp``, a shared parent) is
        left out: it would show the sandboxes beside this one.
        """
        extras = tuple(
            p
            for p in self.readonly_paths
            if p.is_absolute()
            and not is_system_path(p)
            and not self.base.is_relative_to(p)
            and p.exists()
        )
        return View(
            writable=(self.root,),
            private=(self.base / "home", self.base / "tmp"),
            readonly=extras,
            files=self.identity.binds() if self.identity else (),
            tmp_bytes=limits.tmp_mb * 1024 * 1024,
        )

    # --- patches and diffs ---------------------------------------------------

    def apply_patch(self, diff: str) -> patching.PatchResult:
        """Apply a unified diff to the copy, all of it or nothing (:mod:`.patching`).

        Each tool runs contained like any command, so a patch cannot write
        outside the copy; a file put back after a failed ``patch`` is the
        sandbox uid's again.
        """
        result = patching.apply_patch(diff, self.root, self._helper, owner=self.uid)
        if result.applied:  # the changed sources' bytecode goes (bytecode.forget)
            forget(self.root, result.files)
        return result

    def diff(self) -> str:
        """The git-format unified diff (``a/``, ``b/``) of the copy against the original.

        The copy is plain files to it: a ``.git`` folder, file or link a test
        wrote (at the top or nested) is left out and never read, and no
        ``.gitattributes`` applies (see :mod:`fixbugs.sandbox.snapshot`).
        """
        return self._trees.diff(self.root)

    def _helper(self, argv: Sequence[str], stdin: bytes) -> ToolRun:
        """A patch tool run contained in the copy, as :data:`.patching.ToolRunner`."""
        how = self.confinement(Limits(timeout_s=60, memory_mb=1024))
        done = run_contained_sync(argv, how, env=self.environment(), stdin=stdin)
        return ToolRun(tuple(argv), done.returncode, done.stdout, done.stderr)
