"""Private additions to the user's environment, visible only inside the sandbox.

SBFL needs coverage.py (5.1 or newer: ``coverage json`` with per-test
contexts). When the user's environment lacks it, or has an older one,
FixBugs must not install it there: it builds a folder holding only
``coverage`` for that interpreter's ``major.minor`` (cached under
``~/.cache/fixbugs/coverage``) and puts it on ``PYTHONPATH`` of the
sandboxed commands. Sources, in order: an existing coverage install (not one of the
releases whose json report bloats, see :mod:`fixbugs.pyenv.coveragewheels`) for the
same Python version (a cached case environment, the base interpreter's
site-packages), then the newest usable wheel of the local wheel folders
(``$FIXBUGS_WHEELS``, then ``~/.cache/fixbugs/wheels``, where
``scripts/setup`` put one pure-Python release for each of Python 3.6 to
3.14: :mod:`fixbugs.pyenv.coveragewheels`). Nothing is fetched at run time.

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
import zipfile
from dataclasses import replace
from pathlib import Path

from packaging.version import InvalidVersion, Version

from fixbugs.pyenv.coveragewheels import (
    MIN_COVERAGE,
    best_wheel,
    lean_report,
    own_wheel_dir,
    unpack,
)
from fixbugs.pyenv.testenv import default_cache_dir, make_readable
from fixbugs.pyenv.userenv import TestEnv

__all__ = [
    "coverage_overlay",
    "needs_shim",
    "prepare_env",
    "shim_dir",
    "usable_coverage",
    "wheel_dirs",
]

_READY = ".fixbugs-ready"


def _cache_root(cache_dir: Path | None) -> Path:
    return cache_dir or default_cache_dir().parent


def wheel_dirs() -> list[Path]:
    """Local folders of wheels, ``$FIXBUGS_WHEELS`` first, then FixBugs' own cache."""
    dirs = [Path(p) for p in os.environ.get("FIXBUGS_WHEELS", "").split(os.pathsep) if p]
    dirs.append(own_wheel_dir())
    return [d for d in dirs if d.is_dir()]


def usable_coverage(version: str | None) -> bool:
    """Whether coverage.py ``version`` can give SBFL its per-test report (5.1 or newer)."""
    if version is None:
        return False
    try:
        return Version(version) >= MIN_COVERAGE
    except InvalidVersion:
        return False


def _installed_version(site: Path) -> str | None:
    for info in site.glob("coverage-*.dist-info"):
        return info.name.removeprefix("coverage-").removesuffix(".dist-info")
    return None


def _existing_coverage(minor: str, base_prefix: Path) -> Path | None:
    """A ``site-packages`` folder holding a usable coverage for Python ``minor``, if any."""
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
            if (Path(site) / "coverage" / "__init__.py").exists() and _lean(
                _installed_version(Path(site))
            ):
                return Path(site)
    return None


def _lean(version: str | None) -> bool:
    """Whether an install of ``version`` may be copied: usable, and not one that bloats json."""
    try:
        return version is not None and lean_report(Version(version))
    except InvalidVersion:
        return False


def _copy_coverage(site: Path, dest: Path) -> None:
    shutil.copytree(site / "coverage", dest / "coverage", ignore=shutil.ignore_patterns("*.pyc"))
    for info in site.glob("coverage-*.dist-info"):
        shutil.copytree(info, dest / info.name)


def _from_wheels(minor: str, dest: Path) -> bool:
    major, _, low = minor.partition(".")
    wheel = best_wheel((int(major), int(low)), wheel_dirs())
    if wheel is None:
        return False
    try:
        unpack(wheel.path, dest)
    except (OSError, ValueError, zipfile.BadZipFile):  # a damaged or hostile wheel: no overlay
        return False
    return (dest / "coverage" / "__init__.py").exists()


def coverage_overlay(env: TestEnv, *, cache_dir: Path | None = None) -> tuple[Path, str] | None:
    """A folder holding only coverage.py for ``env``'s Python version, and its version.

    Built once per ``major.minor`` and reused; None when no source has it.
    """
    root = _cache_root(cache_dir) / "coverage" / f"py{env.minor}"
    if (root / _READY).exists():
        return root, _installed_version(root) or "unknown"
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".py{env.minor}-", dir=root.parent))
    try:
        site = _existing_coverage(env.minor, env.base_prefix)
        if site is not None:
            _copy_coverage(site, tmp)
        elif not _from_wheels(env.minor, tmp):
            return None
        (tmp / _READY).write_text("")
        make_readable(tmp)
        with contextlib.suppress(OSError):  # another process may have won the race
            tmp.rename(root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not (root / _READY).exists():
        return None
    return root, _installed_version(root) or "unknown"


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


def prepare_env(env: TestEnv, *, cache_dir: Path | None = None) -> tuple[TestEnv, list[str]]:
    """``env`` with a coverage overlay where it lacks a usable coverage; notes for the report."""
    notes: list[str] = []
    if usable_coverage(env.coverage):
        return env, notes
    got = coverage_overlay(env, cache_dir=cache_dir)
    what = (
        f"Python {env.minor} has coverage.py {env.coverage}, older than {MIN_COVERAGE}"
        if env.coverage
        else f"coverage.py is not installed for Python {env.minor}"
    )
    if got is None:
        notes.append(
            f"SBFL will not run: {what} and FixBugs has no copy for it "
            "(run scripts/setup, or put a coverage wheel in $FIXBUGS_WHEELS)"
        )
        return env, notes
    env = replace(env, overlay=got[0], overlay_coverage=got[1])
    notes.append(
        f"{what}: coverage.py {got[1]} supplied from a private overlay ({got[0]}); "
        "the project's environment was not changed"
    )
    return env, notes
