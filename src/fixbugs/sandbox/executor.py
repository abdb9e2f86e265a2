"""The one seam through which a repository's code runs: :class:`Executor`.

The agent (``fixbugs.run``, ``fixbugs.stages``, ``fixbugs.queued``), the
eval and the scorer run the repository's tests only through an executor
and never start a process of their own. :class:`~fixbugs.sandbox.Sandbox`
is the product's executor (contained, see :mod:`fixbugs.sandbox.containment`);
a test may hand the agent another one (``tests/fixbugs/kits/executor.py``
runs commands as plain subprocesses, so the whole agent runs without root).

* :class:`Executor`: runs a command in a tree (:attr:`Executor.root`).
* :class:`Workspace`: an executor over a disposable copy of the repository
  that also applies patches, reports its diff against the pristine original
  (:attr:`Workspace.baseline`), forks fresh copies and is closed when done.
* :class:`WorkspaceFactory`: how a run opens its first workspace from the
  user's tree (``Sandbox.create``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Protocol, Self

if TYPE_CHECKING:
    from fixbugs.sandbox.limits import CommandResult
    from fixbugs.sandbox.patching import PatchResult
    from fixbugs.sandbox.testing import PlainWorkspace
    from fixbugs.sandbox.workspace import Sandbox

__all__ = [
    "ORDINARY_ENVIRONMENT",
    "ClosedOnExit",
    "Executor",
    "Workspace",
    "WorkspaceFactory",
    "command_environment",
]


class Executor(Protocol):
    """Runs commands of the repository in :attr:`root`."""

    @property
    def root(self) -> Path:
        """The tree commands run in (their working directory)."""
        ...

    async def run(
        self,
        cmd: str | Sequence[str],
        *,
        timeout_s: float,
        env: Mapping[str, str] | None = None,
    ) -> CommandResult:
        """Run ``cmd`` (a string runs through ``/bin/sh -c``); never raises for its exit status."""
        ...


class Workspace(Executor, Protocol):
    """An executor over a disposable copy of a repository."""

    @property
    def baseline(self) -> Path:
        """The pristine original the copy was made from: read it, never run in it."""
        ...

    def containment(self) -> tuple[str, ...]:
        """One line per containment mechanism the copy's commands run without (none when
        every one is in force), for the run's report to say so."""
        ...

    def apply_patch(self, diff: str) -> PatchResult:
        """Apply a unified diff to the copy, all of it or nothing."""
        ...

    def diff(self) -> str:
        """The git-format unified diff of the copy against :attr:`baseline`."""
        ...

    def fork(self) -> Workspace:
        """A fresh, independent copy of :attr:`baseline` (blocks: call it in a thread)."""
        ...

    def keep_bytecode(self) -> str:
        """Keep the modules the copy's runs compiled from the pristine sources for the forks
        made from now on, so theirs import compiled (blocks); a line saying what was kept."""
        ...

    def close(self) -> None:
        """Delete the copy; nothing of it runs after this returns."""
        ...


class ClosedOnExit:
    """A workspace as a context manager: leaving the ``with`` block calls :meth:`close`."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class WorkspaceFactory(Protocol):
    """Opens a workspace over a copy of ``repo_root`` (blocks: call it in a thread).

    ``readonly_paths`` are the host folders the tests' interpreter needs
    (:meth:`fixbugs.pyenv.userenv.TestEnv.readonly_paths`).
    """

    def __call__(self, repo_root: Path, *, readonly_paths: Sequence[Path] = ()) -> Workspace: ...


# What an ordinary machine sets: a UTF-8 locale every C library has, and UTC.
# Fixed, not the caller's, so a test's text and times do not depend on who runs it.
ORDINARY_ENVIRONMENT = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC"}


def command_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """What a repository's command sees of ours: the caller's PATH and TERM, then
    :data:`ORDINARY_ENVIRONMENT`, then ``extra``.

    No other variable of this process (an API key, a ``GIT_*`` setting) is passed.
    """
    out = {k: v for k, v in os.environ.items() if k in ("PATH", "TERM")}
    out.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    out.update(ORDINARY_ENVIRONMENT)
    out.update(extra)
    return out


if TYPE_CHECKING:
    # mypy holds both workspaces to these protocols: a drift fails the type check
    _SANDBOX_IS_A_WORKSPACE_FACTORY: WorkspaceFactory = Sandbox.create
    _PLAIN_IS_A_WORKSPACE_FACTORY: WorkspaceFactory = PlainWorkspace.create
