"""Virtualenvs made by the tests: other Pythons (3.10, 3.6, 3.13 from pyenv) and other pytests.

They are built by :mod:`userpython` (the tests' one way to build a venv) offline
from the wheels ``scripts/test-wheels`` fetched into ``.cache/wheels``; without
those wheels (or without pyenv's Python) the tests that need them are skipped
with the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from userpython import WHEELS, make_venv, shared_venv


@pytest.fixture(name="make_venv")
def make_venv_fixture() -> object:
    """:func:`make_venv`, for tests that build a venv of their own."""
    return make_venv


@pytest.fixture(scope="session")
def user_venv() -> Path:
    """A user's venv: Python 3.10 with pytest 7.4.4 and no coverage.py (shared by every
    worker of the machine: the tests only read it)."""
    return shared_venv("3.10", "pytest==7.4.4")


@pytest.fixture
def wheels_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Local wheels for the coverage overlay, and a private cache for it."""
    monkeypatch.setenv("FIXBUGS_WHEELS", str(WHEELS))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"
