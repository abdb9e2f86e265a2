"""The bundled example bugs (``fixbugs run --example NAME``, the service's demo).

Kept here, apart from the CLI, so that the service can find an example
without importing the command line (which imports the service).
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from fixbugs.errors import InputError

__all__ = ["EXAMPLES", "example_dir"]

EXAMPLES = ("invoice",)


def example_dir(name: str) -> Path:
    """The folder of a bundled example: ``report.md``, ``repo/``, ``logs/``, ``traces/``."""
    if name not in EXAMPLES:
        raise InputError(f"unknown example {name!r}; known: {', '.join(EXAMPLES)}")
    return Path(str(importlib.resources.files("fixbugs") / "examples" / name))
