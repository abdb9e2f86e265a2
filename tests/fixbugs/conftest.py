"""Virtualenvs made by the tests: other Pythons (3.10, 3.6, 3.13 from pyenv) and other pytests.

They are installed offline from the wheels ``scripts/test-wheels`` fetched
into ``.cache/wheels``; without those wheels (or without pyenv's Python) the
tests that need them are skipped with the reason.
"""

from __future__ import annotations

import glob
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WHEELS = ROOT / ".cache" / "wheels"


def _pyenv_python(minor: str) -> Path | None:
    found = sorted(glob.glob(f"{Path.home()}/.pyenv/versions/{minor}.*/bin/python{minor}"))
    return Path(found[-1]) if found else None


def make_venv(where: Path, *packages: str, python: str = "3.10") -> Path:
    """A Python ``python`` venv at ``where`` with ``packages`` from the local wheels; its python."""
    base = _pyenv_python(python)
    if base is None:
        pytest.skip(f"needs Python {python} under ~/.pyenv/versions")
    if packages and not (WHEELS / f".ready-py{python}").exists():
        pytest.skip(
            f"needs the Python {python} wheels scripts/test-wheels fetches into .cache/wheels"
        )
    subprocess.run([str(base), "-m", "venv", str(where)], check=True, timeout=120)
    if packages:
        subprocess.run(
            [
                str(where / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "--no-index",
                "--find-links",
                str(WHEELS),
                *packages,
            ],
            check=True,
            timeout=300,
            capture_output=True,
        )
    return where / "bin" / "python"


@pytest.fixture(name="make_venv")
def make_venv_fixture() -> object:
    """:func:`make_venv`, for tests that build a venv of their own."""
    return make_venv


@pytest.fixture(scope="session")
def user_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's venv: Python 3.10 with pytest 7.4.4 and no coverage.py."""
    return make_venv(tmp_path_factory.mktemp("user") / "venv", "pytest==7.4.4")


@pytest.fixture
def wheels_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Local wheels for the coverage overlay, and a private cache for it."""
    monkeypatch.setenv("FIXBUGS_WHEELS", str(WHEELS))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"
