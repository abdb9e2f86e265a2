"""The Pythons that run the users' tests in this suite, and the one way to build a venv.

A test that runs a small repository's tests needs some user's interpreter. FixBugs'
own (``sys.executable``) carries the dev extra's pytest plugins (hypothesis,
xdist, timeout, anyio, schemathesis, ...), and the machine's python3 carries
whatever the machine holds (here hypothesis): each sandboxed pytest start then
costs 1.8-1.9 s of CPU, against 0.8 s with pytest alone, and the suite starts
hundreds. :func:`user_python` is what a user's project venv made from its
requirements looks like: pytest and its dependencies, no coverage.py (SBFL
overlays its own).

Venvs come from the wheels ``scripts/test-wheels`` fetched into ``.cache/wheels``
(the tests never reach the network). Python 3.10 and newer get no pip of their
own (``--without-pip``; FixBugs' pip installs into them with ``--python``): ensurepip
alone costs 4 s of CPU a venv. A venv that tests only read is built once per
machine under ``.cache/test-python`` (:func:`shared_venv`: the first xdist worker
builds it, the others wait on the lock).
"""

from __future__ import annotations

import fcntl
import functools
import glob
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["WHEELS", "make_venv", "shared_venv", "user_python"]

ROOT = Path(__file__).resolve().parents[2]
WHEELS = ROOT / ".cache" / "wheels"
USER_PYTEST = "pytest==8.3.5"


def _pyenv_python(minor: str) -> Path | None:
    found = sorted(glob.glob(f"{Path.home()}/.pyenv/versions/{minor}.*/bin/python{minor}"))
    return Path(found[-1]) if found else None


def _missing(python: str, packages: tuple[str, ...]) -> str | None:
    """Why a Python ``python`` venv with ``packages`` cannot be built here, or None."""
    if _pyenv_python(python) is None:
        return f"needs Python {python} under ~/.pyenv/versions"
    if packages and not (WHEELS / f".ready-py{python}").exists():
        return f"needs the Python {python} wheels scripts/test-wheels fetches into .cache/wheels"
    return None


def make_venv(where: Path, *packages: str, python: str = "3.10") -> Path:
    """A Python ``python`` venv at ``where`` with ``packages`` from the local wheels; its
    python. Skips the test, naming why, where that Python or its wheels are missing."""
    why = _missing(python, packages)
    if why is not None:
        pytest.skip(why)
    base = _pyenv_python(python)
    assert base is not None
    own_pip = tuple(int(p) for p in python.split(".")) < (3, 10)  # FixBugs' pip needs 3.10
    venv = [str(base), "-m", "venv", *([] if own_pip else ["--without-pip"]), str(where)]
    subprocess.run(venv, check=True, timeout=120)
    if packages:
        py = str(where / "bin" / "python")
        pip = [py, "-m", "pip"] if own_pip else [sys.executable, "-m", "pip", "--python", py]
        pip += ["install", "-q", "--disable-pip-version-check", "--no-index"]
        pip += ["--find-links", str(WHEELS), *packages]
        subprocess.run(pip, check=True, timeout=300, capture_output=True)
    return where / "bin" / "python"


def shared_venv(python: str, *packages: str) -> Path:
    """:func:`make_venv`'s venv, built once per machine for tests that only read it."""
    why = _missing(python, packages)
    if why is not None:
        pytest.skip(why)
    name = "-".join([f"py{python}", *(p.replace("==", "-") for p in packages)])
    root = ROOT / ".cache" / "test-python" / name
    root.parent.mkdir(parents=True, exist_ok=True)
    with (root.parent / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / ".ready").exists():
            shutil.rmtree(root, ignore_errors=True)
            make_venv(root, *packages, python=python)
            (root / ".ready").touch()
    return root / "bin" / "python"


@functools.cache
def user_python() -> Path:
    """The suite's user Python: a 3.11 venv with pytest alone (FixBugs' own interpreter
    where that cannot be built here)."""
    if sys.version_info[:2] != (3, 11) or _missing("3.11", (USER_PYTEST,)) is not None:
        return Path(sys.executable)
    return shared_venv("3.11", USER_PYTEST)
