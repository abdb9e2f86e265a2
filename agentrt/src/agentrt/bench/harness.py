"""`agentrt bench`: named benchmarks that report ratios measured in one run.

These machines are shared and noisy, so an absolute time means little; a
benchmark measures the alternatives side by side in the same run and reports
their ratio, plus every figure as JSON for later comparison.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentrt._errors import UserError

__all__ = ["BENCHMARKS", "BenchResult", "Benchmark", "benchmark", "get_benchmark"]


@dataclass(frozen=True, slots=True)
class BenchResult:
    """``figures`` is the JSON record; ``ratios`` the headline comparisons."""

    name: str
    figures: dict[str, Any]
    ratios: tuple[tuple[str, float], ...] = ()
    checks: tuple[tuple[str, bool], ...] = ()  # (criterion, held)
    notes: tuple[str, ...] = ()

    def to_json_obj(self) -> dict[str, Any]:
        return {
            "benchmark": self.name,
            **self.figures,
            "ratios": dict(self.ratios),
            "checks": {k: v for k, v in self.checks},
            "notes": list(self.notes),
        }

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json_obj(), indent=2) + "\n")


BenchFn = Callable[[dict[str, Any]], Coroutine[Any, Any, BenchResult]]


@dataclass(frozen=True, slots=True)
class Benchmark:
    name: str
    description: str
    run: BenchFn
    options: dict[str, Any] = field(default_factory=dict)  # defaults


BENCHMARKS: dict[str, Benchmark] = {}


def benchmark(name: str, description: str, **defaults: Any) -> Callable[[BenchFn], BenchFn]:
    """Register a benchmark function under ``name``."""

    def deco(fn: BenchFn) -> BenchFn:
        BENCHMARKS[name] = Benchmark(name, description, fn, defaults)
        return fn

    return deco


def get_benchmark(name: str) -> Benchmark:
    _load_builtin()
    try:
        return BENCHMARKS[name]
    except KeyError:
        known = ", ".join(sorted(BENCHMARKS))
        raise UserError(f"unknown benchmark {name!r}; known: {known}") from None


def _load_builtin() -> None:
    """Import every module of this package: each registers its benchmarks."""
    import importlib
    import pkgutil

    # the package's folder, found without importing the package (which imports us)
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.name not in {"harness", "simproc"}:
            importlib.import_module(f"agentrt.bench.{info.name}")


def list_benchmarks() -> list[Benchmark]:
    _load_builtin()
    return sorted(BENCHMARKS.values(), key=lambda b: b.name)
