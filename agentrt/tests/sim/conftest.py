"""Fixtures for simulator tests."""

from __future__ import annotations

import pytest
from simkit import SimFactory, open_sim


@pytest.fixture
def make_sim() -> SimFactory:
    """``async with make_sim(profile) as sim:`` — see :func:`simkit.open_sim`."""
    return open_sim
