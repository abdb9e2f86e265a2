"""A workspace for tests: plain subprocesses in a copy, no containment, no root.

pydantic-ai's ``TestModel`` stands in for a model so an agent's own logic is
tested without one; :class:`PlainWorkspace` stands in for
:class:`~fixbugs.sandbox.Sandbox` so the whole agent (``run_bug``, the
staged pipeline) runs as any user::

    ran: list[str] = []
    report = await run_bug(
        inputs, models=..., workspace=functools.partial(PlainWorkspace.create, commands=ran)
    )
    assert any("pytest" in c for c in ran)  # every command, of the copy and its forks

It copies the tree as the sandbox does (the same noise left out, a pristine
baseline beside the copy, the diff taken by the sandbox's own
:class:`~fixbugs.sandbox.snapshot.TreeStore`) and runs each command as a
plain subprocess of the current user in the copy, in its own process group,
killed as a group at its timeout. Nothing is contained: only trusted
repositories (the bundled examples, a test's own) may run in it, and no
product code path opens one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from fixbugs.sandbox import patching
from fixbugs.sandbox.bytecode import forget, keep_for_forks, restore
from fixbugs.sandbox.executor import ClosedOnExit, command_environment
from fixbugs.sandbox.hosttools import ToolRun, run_tool
from fixbugs.sandbox.limits import CommandResult
from fixbugs.sandbox.snapshot import TreeStore
from fixbugs.sandbox.trees import ignore_noise

__all__ = ["PlainWorkspace"]

NOTE = "test workspace: a plain subprocess of the current user, not contained"


class PlainWorkspace(ClosedOnExit):
    """A :class:`~fixbugs.sandbox.executor.Workspace` without containment (tests only)."""

    def __init__(
        self,
        base: Path,
        *,
        baseline: Path,
        parent: TreeStore | None,
        commands: list[str],
        bytecode: Path | None = None,
    ) -> None:
        self.base = base
        self.commands = commands  # what ran here and in every fork, in order (shell form)
        self.root = base / "repo"
        self.baseline = baseline
        self._owns_baseline = parent is None
        self._bytecode = bytecode or base / "bytecode"
        self._trees = TreeStore(base / "baseline.git", scratch=base)
        shutil.copytree(baseline, self.root, symlinks=True, ignore=ignore_noise)
        restore(self._bytecode, self.root)
        (base / "home").mkdir()
        if parent is None:
            self._trees.record_baseline(self.root)
        else:
            self._trees.borrow(parent)

    @classmethod
    def create(
        cls,
        repo_root: Path,
        *,
        readonly_paths: Sequence[Path] = (),
        commands: list[str] | None = None,
    ) -> PlainWorkspace:
        """Copy ``repo_root`` (its pristine baseline and the copy); ``readonly_paths`` are moot.

        Each command run is appended to ``commands`` (a new list if none is given).
        """
        base = Path(tempfile.mkdtemp(prefix="fixbugs-test-workspace-")).resolve()
        try:
            baseline = base / "pristine"
            shutil.copytree(repo_root, baseline, symlinks=True, ignore=ignore_noise)
            return cls(
                base, baseline=baseline, parent=None, commands=[] if commands is None else commands
            )
        except BaseException:
            shutil.rmtree(base, ignore_errors=True)
            raise

    def containment(self) -> tuple[str, ...]:
        """Nothing is contained here, and a report made with it says so."""
        return ("sandbox: a test workspace; commands run uncontained as the current user",)

    def fork(self) -> PlainWorkspace:
        """A fresh copy of the pristine baseline; close it before this one."""
        base = Path(tempfile.mkdtemp(prefix="fixbugs-test-workspace-")).resolve()
        try:
            return type(self)(
                base,
                baseline=self.baseline,
                parent=self._trees,
                commands=self.commands,
                bytecode=self._bytecode,
            )
        except BaseException:
            shutil.rmtree(base, ignore_errors=True)
            raise

    def keep_bytecode(self) -> str:
        """As :meth:`fixbugs.sandbox.Sandbox.keep_bytecode`: for the forks made from now on."""
        return keep_for_forks(self._owns_baseline, self.root, self.baseline, self._bytecode)

    def close(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)

    def environment(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """The caller's PATH and locale and a private HOME, as the sandbox gives."""
        return command_environment({"HOME": str(self.base / "home"), **(env or {})})

    async def run(
        self,
        cmd: str | Sequence[str],
        *,
        timeout_s: float = 60,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult:
        """Run ``cmd`` in the copy (a string through ``/bin/sh -c``); killed at ``timeout_s``."""
        argv = ["/bin/sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        if not argv:
            raise ValueError("empty command")
        self.commands.append(cmd if isinstance(cmd, str) else shlex.join(cmd))
        started = time.monotonic()
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=self.root,
            env=self.environment(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own group: the kill reaches its children
        )
        timed_out = False
        try:
            stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout_s)
        except TimeoutError:
            timed_out = True
            stdout, stderr = b"", b""
        finally:
            if proc.returncode is None or timed_out:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
        return CommandResult(
            argv=tuple(argv),
            returncode=-signal.SIGKILL if timed_out else (proc.returncode or 0),
            stdout=stdout.decode("utf-8", "replace"),
            stderr=stderr.decode("utf-8", "replace"),
            timed_out=timed_out,
            limit_hit="time" if timed_out else None,
            wall_s=time.monotonic() - started,
            truncated=False,
            notes=(NOTE,),
        )

    def apply_patch(self, diff: str) -> patching.PatchResult:
        """Apply ``diff`` to the copy as the sandbox does (:mod:`.patching`), as plain tools."""
        env = {**self.environment(), "GIT_CEILING_DIRECTORIES": str(self.base)}

        def run(argv: Sequence[str], stdin: bytes) -> ToolRun:
            return run_tool(argv, stdin=stdin, cwd=self.root, env=env, timeout_s=60)

        result = patching.apply_patch(diff, self.root, run)
        if result.applied:
            forget(self.root, result.files)
        return result

    def diff(self) -> str:
        return self._trees.diff(self.root)
