"""A virtualenv the repository ships: host folders found on the host, its Python run sandboxed.

A ``.venv`` committed in the repository is the repository's like any other
file: its ``bin/python`` may be a shell script, its ``site-packages`` may
hold a ``.pth`` file that runs code at start-up, its ``pyvenv.cfg`` may
name any folder, and whatever it prints about itself is its own to choose.
So nothing of it runs on the host: :func:`run_in_sandbox` runs it in a
:class:`~fixbugs.sandbox.Sandbox` of an empty folder, as the tests run.
Nor does anything it says become a folder the sandbox shows: those
(the venv itself and its base interpreter's installation) are derived by
:func:`repo_venv` from the file system alone, without running anything:

* the venv and its ``bin`` are folders of the repository, not links;
* the base interpreter is where ``bin/python``'s link resolves on the host,
  accepted only as a Python installation outside the repository: a
  ``pythonX.Y`` regular executable whose prefix holds ``lib/python*/os.py``
  and does not hold the repository;
* ``pyvenv.cfg``'s ``home`` is read only for a venv whose ``bin/python``
  lies inside the repository (copied executables, a script), and counts
  only when it names such an installation; where the link decides, a
  disagreeing ``home`` is a note.

A venv without such a base installation is not used at all: nothing of
the repository may stand in for one (a coverage overlay is copied from
the base's ``site-packages`` into a cache that later runs share).
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fixbugs.errors import InputError
from fixbugs.inputs.inert import one_line
from fixbugs.sandbox import CommandResult, Sandbox, UntrustedFile, read_untrusted_sync

__all__ = ["RepoVenv", "printable", "repo_venv", "run_in_sandbox"]

_PYTHON_NAME = re.compile(r"python(\d+(\.\d+)?)?")
_MAX_CFG_BYTES = 64 * 1024
_MAX_PROBE_OUTPUT = 64 * 1024


@dataclass(frozen=True, slots=True)
class RepoVenv:
    """A repository's venv, as the host's file system shows it (nothing of it has run)."""

    venv: Path  # the venv folder, a real folder of the repository
    python: Path  # its bin/python, as found
    base_prefix: Path  # the base interpreter's installation, checked on the host
    notes: tuple[str, ...] = ()

    @property
    def readonly(self) -> tuple[Path, ...]:
        """The only host folders a sandbox running this venv's Python is shown."""
        return (self.venv, self.base_prefix)


def printable(text: str, limit: int = 200) -> str:
    """``text`` (a name or output from the repository) on one line, inert, capped."""
    return one_line(text)[:limit]


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _installation(exe: Path, repo: Path) -> Path | None:
    """The prefix of the Python installation whose executable is ``exe`` (resolved), or None.

    None for anything else: a non-Python name, a file inside the repository,
    a prefix that holds the repository (``/``, a home folder), a prefix
    without a standard library.
    """
    prefix = exe.parent.parent
    if (
        not exe.is_absolute()
        or not _PYTHON_NAME.fullmatch(exe.name)
        or exe.is_relative_to(repo)
        or repo.is_relative_to(prefix)
    ):
        return None
    try:
        st = os.stat(exe)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or not st.st_mode & 0o111:
        return None
    if not any(p.is_file() for p in prefix.glob("lib/python*/os.py")):
        return None
    return prefix


def _cfg_home(venv: Path) -> Path | None:
    """``pyvenv.cfg``'s ``home``, read as untrusted text (no link, no FIFO, capped)."""
    try:
        raw = read_untrusted_sync(venv / "pyvenv.cfg", max_bytes=_MAX_CFG_BYTES, within=venv)
    except UntrustedFile:
        return None
    for line in raw.decode("utf-8", errors="replace").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "home" and value.strip().startswith("/"):
            return Path(value.strip())
    return None


def _home_installation(home: Path, repo: Path) -> Path | None:
    try:
        names = sorted(p.name for p in home.iterdir() if _PYTHON_NAME.fullmatch(p.name))
    except OSError:
        return None
    for name in names:
        found = _installation(Path(os.path.realpath(home / name)), repo)
        if found is not None:
            return found
    return None


def repo_venv(python: Path) -> RepoVenv:
    """What the sandbox must show to run ``python``, a ``bin/python`` of a repository's venv.

    Raises :class:`InputError` (one line) when the venv cannot be used
    without trusting it: a linked venv or ``bin``, a ``bin/python`` that
    links out of the repository to anything but a Python installation, or
    one inside the repository (a script, a copy) whose ``pyvenv.cfg`` names
    no Python installation outside it.
    """
    venv = python.parent.parent
    for folder in (venv, venv / "bin"):
        if not _real_dir(folder):
            raise InputError(
                f"{_unused(python)}: {printable(str(folder))} is a link or not a folder"
            )
    repo = Path(os.path.realpath(venv.parent))
    target = Path(os.path.realpath(python))
    home = _cfg_home(venv)
    if target.is_relative_to(repo):
        # a copied executable or a script: only pyvenv.cfg can name the base
        base = None if home is None else _home_installation(home, repo)
        if base is None:
            raise InputError(
                f"{_unused(python)}: its bin/python is no link to a Python installation and "
                "its pyvenv.cfg names none outside the repository"
            )
        return RepoVenv(venv, python, base)
    base = _installation(target, repo)
    if base is None:
        raise InputError(
            f"{_unused(python)}: it links to {printable(str(target))}, which is not a Python "
            "installation outside the repository"
        )
    notes: tuple[str, ...] = ()
    if home is not None and Path(os.path.realpath(home)) != target.parent:
        notes = (
            f"{printable(str(venv))}/pyvenv.cfg: its home disagrees with where bin/python "
            "links; the link was used",
        )
    return RepoVenv(venv, python, base, notes)


def _unused(python: Path) -> str:
    return f"Python interpreter {printable(str(python))} (repository venv) is not used"


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def run_in_sandbox(layout: RepoVenv, args: Sequence[str], *, timeout_s: float) -> CommandResult:
    """Run the venv's Python with ``args`` in a sandbox of an empty folder.

    The sandbox shows it only :attr:`RepoVenv.readonly` besides the system
    folders. Blocks (it runs an event loop of its own, in a thread of its own
    when the caller's thread already runs one).
    """
    argv = [str(layout.python), *args]

    def probe() -> CommandResult:
        with (
            tempfile.TemporaryDirectory(prefix="fixbugs-probe-") as empty,
            Sandbox.create(Path(empty), readonly_paths=layout.readonly) as sandbox,
        ):
            return asyncio.run(
                sandbox.run(
                    argv,
                    timeout_s=timeout_s,
                    max_output_bytes=_MAX_PROBE_OUTPUT,
                    env={"PYTHONDONTWRITEBYTECODE": "1"},
                )
            )

    try:
        if not _loop_running():
            return probe()
        # called from a coroutine: its loop cannot run another, a thread of its own can
        with ThreadPoolExecutor(1, thread_name_prefix="fixbugs-probe") as pool:
            return pool.submit(probe).result()
    except (OSError, RuntimeError) as exc:
        raise InputError(
            f"Python interpreter {printable(str(layout.python))} (repository venv) could not "
            f"be probed: the sandbox failed ({printable(str(exc))})"
        ) from None
