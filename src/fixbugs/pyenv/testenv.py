"""Test environments: one cached virtualenv per (interpreter version, requirements).

A bug's tests must run under the interpreter and pins the project needs
(e.g. Python 3.8 with pytest 3.10), not under the agent's own Python.
Creating such a venv costs tens of seconds and needs the package registry,
so it happens once, at setup time, and is cached under
``~/.cache/fixbugs/envs/py<version>-<hash>``; every later run (and every
sandboxed command, which has no network) reuses it.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from fixbugs.errors import InputError
from fixbugs.sandbox.hosttools import run_tool

__all__ = [
    "cached_env",
    "default_cache_dir",
    "ensure_python_env",
    "env_key",
    "make_readable",
    "resolve_interpreter",
]

_READY = ".fixbugs-ready"
_VERSION_ONLY = re.compile(r"^\d+(\.\d+)*$")


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "fixbugs" / "envs"


def env_key(version: str, requirements: Sequence[str], extra: Sequence[str]) -> str:
    """A stable folder name: same version and same set of pins → same venv."""
    pins = sorted({r.strip() for r in (*requirements, *extra) if r.strip()})
    digest = hashlib.sha256("\n".join(pins).encode()).hexdigest()[:12]
    return f"py{version}-{digest}"


def _probe(exe: str) -> str | None:
    """The ``major.minor`` of a working interpreter, or None if it does not run."""
    out = run_tool([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], timeout_s=30)
    return out.stdout_text.strip() if out.ok else None


def resolve_interpreter(python: str) -> tuple[str, str]:
    """``python`` ("3.8", "python3.8" or a path) → (executable, "major.minor").

    A pyenv shim that is on PATH but not activated fails to run, so pyenv's
    own versions folder is searched as well.
    """
    want = (
        python.removeprefix("python")
        if _VERSION_ONLY.match(python.removeprefix("python"))
        else None
    )
    candidates: list[str] = []
    if want is None:
        candidates.append(python)
    else:
        found = shutil.which(f"python{want}")
        if found:
            candidates.append(found)
        root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
        candidates.extend(
            sorted(glob.glob(f"{root}/versions/{want}*/bin/python{want}"), reverse=True)
        )
    for exe in candidates:
        version = _probe(exe)
        if version and (want is None or version == want or version.startswith(want + ".")):
            return exe, version
    hint = (
        f"install Python {want} (e.g. `pyenv install {want}`)"
        if want
        else "give a working interpreter"
    )
    raise InputError(f"Python interpreter {python!r} not found or not runnable: {hint}")


def cached_env(
    python: str,
    requirements: Sequence[str],
    extra: Sequence[str] = ("coverage",),
    *,
    cache_dir: Path | None = None,
) -> Path | None:
    """The bin dir of an already-built env, or None (never creates one, never uses the network)."""
    try:
        _, version = resolve_interpreter(python)
    except InputError:
        return None
    root = (cache_dir or default_cache_dir()) / env_key(version, requirements, extra)
    return root / "bin" if (root / _READY).exists() else None


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Serialize creation of one env across processes (parallel evals share the cache)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_python_env(
    python: str,
    requirements: Sequence[str],
    extra: Sequence[str] = ("coverage",),
    *,
    cache_dir: Path | None = None,
    pip_timeout_s: float = 900.0,
    no_deps: bool = False,
) -> Path:
    """The ``bin`` folder of a venv with ``requirements`` + ``extra`` for ``python``.

    Created with pip on first use (needs the package registry), then reused.
    The venv is world-readable so a sandbox running as an unprivileged user
    can execute it. ``no_deps``: install exactly the pins, none of their
    dependencies (a frozen list that already names every one of them, whose
    own pins pip's resolver finds in conflict); the venv is the same venv
    (same folder) either way.
    """
    exe, version = resolve_interpreter(python)
    root = (cache_dir or default_cache_dir()) / env_key(version, requirements, extra)
    bin_dir = root / "bin"
    if (root / _READY).exists():
        return bin_dir
    with _locked(root.with_suffix(".lock")):
        if (root / _READY).exists():  # another process finished it while we waited
            return bin_dir
        shutil.rmtree(root, ignore_errors=True)  # invariant: no half-built env is ever reused
        _run([exe, "-m", "venv", str(root)], "create the venv", 300)
        pins = [r for r in (*requirements, *extra) if r.strip()]
        if pins:
            _run(
                [
                    str(bin_dir / "python"),
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    *(["--no-deps"] if no_deps else []),
                    *pins,
                ],
                f"install {len(pins)} packages",
                pip_timeout_s,
                cleanup=root,
            )
        make_readable(root)
        (root / _READY).write_text(f"{exe}\n")
    return bin_dir


def _run(argv: list[str], what: str, timeout_s: float, cleanup: Path | None = None) -> None:
    out = run_tool(argv, timeout_s=timeout_s)
    if out.timed_out:
        if cleanup:
            shutil.rmtree(cleanup, ignore_errors=True)
        raise InputError(f"test environment: could not {what} within {timeout_s:.0f}s")
    if out.returncode != 0:
        if cleanup:
            shutil.rmtree(cleanup, ignore_errors=True)
        last = (out.stderr_text or out.stdout_text).strip().splitlines()[-1:] or ["no output"]
        raise InputError(f"test environment: could not {what}: {last[0]}")


def make_readable(root: Path) -> None:
    """Let other users read and run the venv (the sandbox runs commands unprivileged)."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            p = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):
                if not os.path.islink(p):
                    mode = os.stat(p).st_mode
                    os.chmod(p, mode | 0o044 | ((mode & 0o100) >> 3) | ((mode & 0o100) >> 6))
        with contextlib.suppress(OSError):
            os.chmod(dirpath, os.stat(dirpath).st_mode | 0o055)
