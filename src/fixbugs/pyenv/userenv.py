"""The user's Python environment: which interpreter runs the project's tests.

A project's tests must run under the project's own interpreter and pins
(a Python 3.8 project with pytest 3.10), never under the interpreter that
happens to run FixBugs. The choice, in order:

1. ``--python PATH``, the only way FixBugs' own interpreter is ever used;
2. the active virtualenv (``$VIRTUAL_ENV``);
3. a ``.venv`` or ``venv`` folder inside the repository;
4. ``python3`` / ``python`` on the caller's ``PATH``, skipping FixBugs' own
   environment.

:func:`choose_interpreter` is the pure part (a function of paths and the
environment); :func:`probe_env` asks the chosen interpreter what it is
(version, prefix, pytest, coverage). The user's own interpreters (1, 2, 4)
are probed on the host: the user named them. A repository's venv (3) is
the repository's code: it is probed only in the sandbox, its host folders
come from :func:`fixbugs.pyenv.repovenv.repo_venv`, never from what it prints,
and of its answer only the data fields are taken, after checking their
shape. Nothing here writes to the user's environment: where it lacks
coverage.py, :mod:`fixbugs.pyenv.overlay` supplies a private copy that only the
sandboxed commands see.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fixbugs.errors import InputError
from fixbugs.pyenv.repovenv import printable, repo_venv, run_in_sandbox
from fixbugs.sandbox.hosttools import NOT_STARTED, host_env, run_tool

__all__ = [
    "EnvSource",
    "Interpreter",
    "TestEnv",
    "bytecode_env",
    "choose_interpreter",
    "own_prefixes",
    "probe_env",
]

EnvSource = Literal["--python", "VIRTUAL_ENV", "repository venv", "PATH", "case env"]

_NO_BYTECODE = "PYTHONDONTWRITEBYTECODE"


def bytecode_env(write: bool) -> dict[str, str]:
    """The variable that keeps a test command from writing bytecode, or lets it.

    Test commands write none (:meth:`TestEnv.command_env`): a source rewritten
    within the second at the same size would run stale. A command that should
    write it (the reproduction's, whose bytecode the forks keep) is given the
    variable empty, which Python reads as unset and which overrides the one set.
    """
    return {_NO_BYTECODE: "" if write else "1"}


# What the user's interpreter may need of the caller's shell (a pyenv shim, a conda
# or virtualenv activation, the user's PYTHONPATH): passed to its probe.
INTERPRETER_ENV = ("PYENV", "VIRTUAL_ENV", "CONDA", "PYTHON")

# Runs under any Python >= 3.6: what the environment has (data only, no path).
_DATA_PROBE = r"""
import json, sys
def ver(name):
    try:
        import importlib.util
        if importlib.util.find_spec(name) is None:
            return None
    except Exception:
        return None
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        try:
            return getattr(__import__(name), "__version__", "unknown")
        except Exception:
            return None
info = {
    "version": "%d.%d.%d" % sys.version_info[:3],
    "pytest": ver("pytest"),
    "coverage": ver("coverage"),
}
"""
# The user's own interpreter also says where it lives (the user named it).
_PROBE = (
    _DATA_PROBE
    + """info.update(
    executable=sys.executable,
    prefix=sys.prefix,
    base_prefix=getattr(sys, "base_prefix", sys.prefix),
)
print(json.dumps(info))
"""
)
_DATA_PROBE += "print(json.dumps(info))\n"
_DATA_FIELDS = ("version", "pytest", "coverage")
_VERSION = re.compile(r"\d{1,2}\.\d{1,3}\.\d{1,4}")
_PACKAGE_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+!_-]{0,39}")


@dataclass(frozen=True, slots=True)
class Interpreter:
    """An interpreter chosen for the user's tests, and why it was chosen."""

    path: Path  # as found (a venv's bin/python, not the file it links to)
    source: EnvSource


@dataclass(frozen=True, slots=True)
class TestEnv:
    """The environment the user's tests run in, as the interpreter itself reported it."""

    __test__ = False  # not a pytest test class

    python: Path
    source: EnvSource
    version: str  # "3.8.18"
    prefix: Path  # sys.prefix (the venv, when it is one)
    base_prefix: Path  # the base interpreter's installation
    pytest: str | None  # pytest's version, None when the environment lacks it
    coverage: str | None  # coverage.py's version in the environment itself
    overlay: Path | None = None  # private coverage.py, visible only in the sandbox
    overlay_coverage: str | None = None
    shim: Path | None = None  # a folder whose ``python`` runs this interpreter

    @property
    def minor(self) -> str:
        return ".".join(self.version.split(".")[:2])

    @property
    def is_venv(self) -> bool:
        return self.prefix != self.base_prefix

    @property
    def has_coverage(self) -> bool:
        return self.coverage is not None or self.overlay is not None

    def command_env(self, caller_path: str | None = None) -> dict[str, str]:
        """Variables for every test command: this interpreter's folder first on ``PATH``.

        The rest of ``PATH`` is the caller's, minus FixBugs' own ``bin``, so
        ``python`` and ``pytest`` in a test command mean the user's.
        """
        rest = os.environ.get("PATH", "") if caller_path is None else caller_path
        env = {
            **bytecode_env(write=False),
            "PATH": path_with(self.python.parent, rest, [p / "bin" for p in own_prefixes()]),
        }
        if self.shim is not None:
            env["PATH"] = f"{self.shim}{os.pathsep}{env['PATH']}"
        if self.is_venv:
            env["VIRTUAL_ENV"] = str(self.prefix)
        if self.overlay is not None:
            env["PYTHONPATH"] = str(self.overlay)
        return env

    def readonly_paths(self) -> tuple[Path, ...]:
        """Folders the sandbox must show read-only: the venv, the base Python, the overlay."""
        paths: list[Path] = []
        for p in (self.python.parent, self.prefix, self.base_prefix, self.overlay, self.shim):
            if p is None:
                continue
            for q in (p, p.resolve()):
                if q not in paths:
                    paths.append(q)
        return tuple(paths)

    def describe(self) -> str:
        """One line for the report: which interpreter and which pytest."""
        pytest = f"pytest {self.pytest}" if self.pytest else "no pytest"
        cov = (
            f"coverage {self.coverage}"
            if self.coverage
            else f"coverage {self.overlay_coverage} (private overlay)"
            if self.overlay is not None
            else "no coverage.py"
        )
        return f"Python {self.version} at {self.python} ({self.source}); {pytest}; {cov}"

    def to_dict(self) -> dict[str, object]:
        return {
            "python": str(self.python),
            "source": self.source,
            "version": self.version,
            "prefix": str(self.prefix),
            "pytest": self.pytest,
            "coverage": self.coverage,
            "coverage_overlay": str(self.overlay) if self.overlay else None,
            "overlay_coverage": self.overlay_coverage,
        }


def own_prefixes() -> frozenset[Path]:
    """FixBugs' own environment (a virtualenv), which user tests never run in unasked."""
    if sys.prefix == sys.base_prefix:  # installed into a base interpreter: nothing to skip
        return frozenset()
    return frozenset({Path(sys.prefix), Path(sys.prefix).resolve()})


def _venv_python(venv: Path) -> Path | None:
    for name in ("python", "python3"):
        cand = venv / "bin" / name
        if cand.exists():
            return cand
    return None


def _is_own(python: Path, own: frozenset[Path]) -> bool:
    folder = python.parent.parent
    return folder in own or folder.resolve() in own


def choose_interpreter(
    repo: Path,
    *,
    python: Path | None = None,
    environ: Mapping[str, str] | None = None,
    own: frozenset[Path] | None = None,
    is_executable: Callable[[Path], bool] = lambda p: p.is_file() and os.access(p, os.X_OK),
) -> Interpreter:
    """The interpreter for the user's tests, by the order in the module docstring.

    Its path is absolute (made so, not resolved: a venv's ``bin/python`` link
    must stay the venv's), since the tests run in a sandbox whose working
    folder is not the caller's: ``--repo .`` or ``--python .venv/bin/python``
    must name the same file there.
    """
    env = os.environ if environ is None else environ
    own = own_prefixes() if own is None else own
    repo = Path(os.path.abspath(repo))
    if python is not None:
        if not is_executable(python):
            raise InputError(f"--python {python}: not an executable file")
        return Interpreter(Path(os.path.abspath(python)), "--python")
    venv = env.get("VIRTUAL_ENV")
    if venv:
        found = _venv_python(Path(os.path.abspath(venv)))
        if found is not None and not _is_own(found, own):
            return Interpreter(found, "VIRTUAL_ENV")
    for name in (".venv", "venv"):
        found = _venv_python(repo / name)
        if found is not None and is_executable(found):
            return Interpreter(found, "repository venv")
    for folder in env.get("PATH", "").split(os.pathsep):
        if not folder:
            continue
        for name in ("python3", "python"):
            cand = Path(os.path.abspath(folder)) / name
            if is_executable(cand) and not _is_own(cand, own):
                return Interpreter(cand, "PATH")
    raise InputError(
        "no Python interpreter found for the project's tests (no --python, no active "
        "virtualenv, no .venv in the repository, no python3 on PATH besides FixBugs' own); "
        "give one with --python PATH"
    )


def probe_env(
    interp: Interpreter, *, timeout_s: float = 60.0, notes: list[str] | None = None
) -> TestEnv:
    """Ask the interpreter what it is; a clear error when it does not run.

    A repository venv is asked in the sandbox (:func:`_probe_repository_venv`);
    ``notes`` receives what of its answer or its ``pyvenv.cfg`` was refused.
    """
    if interp.source == "repository venv":
        return _probe_repository_venv(interp, timeout_s, [] if notes is None else notes)
    out = run_tool(
        [str(interp.path), "-c", _PROBE],
        timeout_s=timeout_s,
        cwd="/",
        env=host_env(keep=INTERPRETER_ENV),
    )
    if out.returncode == NOT_STARTED or out.timed_out:
        why = out.said().splitlines()[-1:] or ["no output"]
        raise InputError(f"Python interpreter {interp.path} does not run: {why[0][:200]}")
    try:
        info = json.loads(out.stdout_text.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        last = (out.stderr_text or out.stdout_text).strip().splitlines()[-1:] or ["no output"]
        raise InputError(
            f"Python interpreter {interp.path} ({interp.source}) does not run: {last[0][:200]}"
        ) from None
    python = interp.path
    prefix = Path(info["prefix"])
    if not _within(python, prefix) and info.get("executable"):
        # a launcher outside the environment (a pyenv shim, a wrapper script):
        # run the interpreter it launched, which needs nothing but its prefix
        python = Path(info["executable"])
    return TestEnv(
        python=python,
        source=interp.source,
        version=str(info["version"]),
        prefix=prefix,
        base_prefix=Path(info["base_prefix"]),
        pytest=info.get("pytest"),
        coverage=info.get("coverage"),
    )


def _probe_repository_venv(interp: Interpreter, timeout_s: float, notes: list[str]) -> TestEnv:
    """A repository venv's environment: paths from the host, data fields from the sandbox.

    Invariant: every path of the result (``python``, ``prefix``,
    ``base_prefix``) comes from :func:`repo_venv`, so what the venv prints
    never decides a folder that a test sandbox shows.
    """
    layout = repo_venv(interp.path)
    notes.extend(layout.notes)
    done = run_in_sandbox(layout, ["-c", _DATA_PROBE], timeout_s=timeout_s)
    where = f"Python interpreter {printable(str(interp.path))} ({interp.source})"
    info = _answer(done.stdout) if done.returncode == 0 else None
    version = None if info is None else info.get("version")
    if info is None or not isinstance(version, str) or not _VERSION.fullmatch(version):
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        why = "timed out" if done.timed_out else printable(last[0])
        raise InputError(f"{where} could not be probed in the sandbox: {why}")
    extra = [k for k in info if k not in _DATA_FIELDS]
    if extra:
        shown = ", ".join(printable(str(k), 40) for k in extra[:5])
        notes.append(f"{where}: its probe printed fields FixBugs does not take from it ({shown})")
    return TestEnv(
        python=interp.path,
        source=interp.source,
        version=version,
        prefix=layout.venv,
        base_prefix=layout.base_prefix,
        pytest=_package_version(info.get("pytest"), "pytest", where, notes),
        coverage=_package_version(info.get("coverage"), "coverage", where, notes),
    )


def _answer(stdout: str) -> dict[str, object] | None:
    """The probe's last line as a JSON object, or None for anything else."""
    lines = stdout.strip().splitlines()
    try:
        info = json.loads(lines[-1]) if lines else None
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return None
    return info if isinstance(info, dict) else None


def _package_version(value: object, name: str, where: str, notes: list[str]) -> str | None:
    """A package version from an untrusted probe: a short version string, or None."""
    if value is None or (isinstance(value, str) and _PACKAGE_VERSION.fullmatch(value)):
        return value
    notes.append(f"{where}: its probe's {name} version is malformed; taken as absent")
    return None


def _within(path: Path, folder: Path) -> bool:
    return path.parent.parent in (folder, folder.resolve()) or path.is_relative_to(folder)


def path_with(first: Path, rest: str | None, skip: Sequence[Path] = ()) -> str:
    """``first`` then ``rest``'s folders, minus any under ``skip`` (FixBugs' own bin)."""
    skipped = {str(s) for s in skip}
    folders = [f for f in (rest or "").split(os.pathsep) if f and f not in skipped]
    return os.pathsep.join([str(first), *[f for f in folders if f != str(first)]])
