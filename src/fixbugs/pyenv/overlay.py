"""Private additions to the user's environment, visible only inside the sandbox.

SBFL needs coverage.py. When the user's environment lacks it, FixBugs must
not install it there: it builds a folder holding only ``coverage`` for that
interpreter's ``major.minor`` (cached under ``~/.cache/fixbugs/coverage``)
and puts it on ``PYTHONPATH`` of the sandboxed commands. Sources, in order:
an existing coverage install for the same Python version (a cached case
environment, the base interpreter's site-packages), then ``pip install
--target`` from local wheel folders (``$FIXBUGS_WHEELS``,
``~/.cache/fixbugs/wheels``), then, only when allowed, from the package
index. Nothing is fetched while a test runs in the sandbox (it has no
network).

A test command says ``python``; when the chosen interpreter's folder has no
``python`` that is the same interpreter (a bare ``/usr/bin/python3``), a
shim folder with ``python``/``python3`` scripts that exec it goes first on
``PATH``.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from fixbugs.pyenv.testenv import default_cache_dir, make_readable
from fixbugs.pyenv.userenv import TestEnv
from fixbugs.sandbox.hosttools import run_tool

__all__ = ["coverage_overlay", "needs_shim", "prepare_env", "shim_dir", "wheel_dirs"]

_READY = ".fixbugs-ready"


def _cache_root(cache_dir: Path | None) -> Path:
    return cache_dir or default_cache_dir().parent


def wheel_dirs() -> list[Path]:
    """Local folders of wheels, searched before any download."""
    dirs = [Path(p) for p in os.environ.get("FIXBUGS_WHEELS", "").split(os.pathsep) if p]
    dirs.append(default_cache_dir().parent / "wheels")
    return [d for d in dirs if d.is_dir()]


def _existing_coverage(minor: str, base_prefix: Path) -> Path | None:
    """A ``site-packages`` folder holding coverage for Python ``minor``, if any."""
    patterns = [
        f"{default_cache_dir()}/py{minor}-*/lib/python{minor}/site-packages",
        f"{base_prefix}/lib/python{minor}/site-packages",
    ]
    if minor == "{}.{}".format(*sys.version_info[:2]):
        # FixBugs' own environment carries coverage for this very Python: copying it
        # into the private overlay leaves both environments untouched.
        patterns.append(f"{sys.prefix}/lib/python{minor}/site-packages")
    for pattern in patterns:
        for site in sorted(glob.glob(pattern)):
            if (Path(site) / "coverage" / "__init__.py").exists():
                return Path(site)
    return None


def _copy_coverage(site: Path, dest: Path) -> None:
    shutil.copytree(site / "coverage", dest / "coverage", ignore=shutil.ignore_patterns("*.pyc"))
    for info in site.glob("coverage-*.dist-info"):
        shutil.copytree(info, dest / info.name)


def _pip_target(minor: str, dest: Path, find_links: Sequence[Path], *, index: bool) -> bool:
    argv = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        minor,
        "--target",
        str(dest),
    ]
    if not index:
        argv.append("--no-index")
    for d in find_links:
        argv += ["--find-links", str(d)]
    argv.append("coverage")
    out = run_tool(argv, timeout_s=300)
    return out.ok and (dest / "coverage" / "__init__.py").exists()


def _version_in(folder: Path) -> str:
    for info in folder.glob("coverage-*.dist-info"):
        return info.name.removeprefix("coverage-").removesuffix(".dist-info")
    return "unknown"


def coverage_overlay(
    env: TestEnv, *, allow_download: bool = False, cache_dir: Path | None = None
) -> tuple[Path, str] | None:
    """A folder holding only coverage.py for ``env``'s Python version, and its version.

    Built once per ``major.minor`` and reused; None when no source has it.
    """
    root = _cache_root(cache_dir) / "coverage" / f"py{env.minor}"
    if (root / _READY).exists():
        return root, _version_in(root)
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".py{env.minor}-", dir=root.parent))
    try:
        site = _existing_coverage(env.minor, env.base_prefix)
        if site is not None:
            _copy_coverage(site, tmp)
        elif not (
            _pip_target(env.minor, tmp, wheel_dirs(), index=False)
            or (allow_download and _pip_target(env.minor, tmp, wheel_dirs(), index=True))
        ):
            return None
        (tmp / _READY).write_text("")
        make_readable(tmp)
        with contextlib.suppress(OSError):  # another process may have won the race
            tmp.rename(root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not (root / _READY).exists():
        return None
    return root, _version_in(root)


def needs_shim(python: Path) -> bool:
    """Whether ``python`` in the interpreter's own folder would run another interpreter."""
    try:
        target = python.resolve()
        return any((python.parent / n).resolve() != target for n in ("python", "python3"))
    except OSError:
        return True


def shim_dir(python: Path, *, cache_dir: Path | None = None) -> Path:
    """A folder whose ``python`` and ``python3`` exec ``python`` (made once, cached)."""
    digest = hashlib.sha256(str(python).encode()).hexdigest()[:12]
    folder = _cache_root(cache_dir) / "shims" / digest
    if not (folder / "python").exists():
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("python", "python3"):
            p = folder / name
            p.write_text(f'#!/bin/sh\nexec {shlex.quote(str(python))} "$@"\n')
            p.chmod(0o755)
        make_readable(folder)
    return folder


def prepare_env(
    env: TestEnv, *, allow_download: bool = False, cache_dir: Path | None = None
) -> tuple[TestEnv, list[str]]:
    """``env`` with a coverage overlay where it lacks coverage, and notes for the report."""
    notes: list[str] = []
    if env.coverage is None:
        got = coverage_overlay(env, allow_download=allow_download, cache_dir=cache_dir)
        if got is None:
            notes.append(
                f"coverage.py is not installed for Python {env.minor} and no local copy was "
                "found; SBFL will not run (put a coverage wheel in $FIXBUGS_WHEELS)"
            )
        else:
            env = replace(env, overlay=got[0], overlay_coverage=got[1])
            notes.append(
                f"coverage.py {got[1]} supplied from a private overlay ({got[0]}); "
                "the project's environment was not changed"
            )
    return env, notes
