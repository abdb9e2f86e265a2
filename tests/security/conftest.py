"""Fixtures of the hostile-repository suite (helpers live in :mod:`hostile`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fixbugs.sandbox import Sandbox


@pytest.fixture
def sandboxes(tmp_path: Path) -> Iterator[list[Sandbox]]:
    """Sandboxes a test opens; all closed at the end, whatever happened."""
    opened: list[Sandbox] = []
    yield opened
    for sb in opened:
        sb.close()
