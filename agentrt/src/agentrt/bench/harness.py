"""`agentrt bench`: named benchmarks that report ratios measured in one run.

These machines are shared and noisy, so an absolute time means little; a
benchmark measures the alternatives side by side in the same run and reports
their ratio, plus every figure as JSON for later comparison.

Each benchmark declares its options as a frozen dataclass whose every field
has a default; ``agentrt bench NAME --set KEY=VALUE`` overrides fields, each
value converted from its string by the field's type (:func:`parse_options`),
and the benchmark receives the typed instance.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from agentrt._errors import UserError
from agentrt._json import JsonObject

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "BENCHMARKS",
    "BenchResult",
    "BenchRun",
    "Benchmark",
    "benchmark",
    "get_benchmark",
    "parse_options",
]


@dataclass(frozen=True, slots=True)
class BenchResult:
    """``figures`` is the JSON record; ``ratios`` the headline comparisons."""

    name: str
    figures: JsonObject
    ratios: tuple[tuple[str, float], ...] = ()
    checks: tuple[tuple[str, bool], ...] = ()  # (criterion, held)
    notes: tuple[str, ...] = ()

    def to_json_obj(self) -> JsonObject:
        return {
            "benchmark": self.name,
            **self.figures,
            "ratios": dict(self.ratios),
            "checks": {k: v for k, v in self.checks},
            "notes": list(self.notes),
        }

    def write_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json_obj(), indent=2) + "\n")


OptionsT = TypeVar("OptionsT", bound="DataclassInstance")
BenchFn = Callable[[OptionsT], Coroutine[None, None, BenchResult]]


@dataclass(frozen=True, slots=True)
class BenchRun:
    """One benchmark with its options settled: ``start()`` runs it."""

    name: str
    options: DataclassInstance  # the benchmark's own options dataclass
    start: Callable[[], Coroutine[None, None, BenchResult]]


@dataclass(frozen=True, slots=True)
class Benchmark:
    name: str
    description: str
    defaults: DataclassInstance  # its options dataclass, every field at its default
    configure: Callable[[Sequence[str]], BenchRun]  # from --set KEY=VALUE strings


BENCHMARKS: dict[str, Benchmark] = {}


def benchmark(
    name: str, description: str, options: type[OptionsT]
) -> Callable[[BenchFn[OptionsT]], BenchFn[OptionsT]]:
    """Register a benchmark function under ``name``; it takes ``options``."""

    def deco(fn: BenchFn[OptionsT]) -> BenchFn[OptionsT]:
        def configure(settings: Sequence[str]) -> BenchRun:
            opts = parse_options(options, settings)
            return BenchRun(name, opts, lambda: fn(opts))

        BENCHMARKS[name] = Benchmark(name, description, options(), configure)
        return fn

    return deco


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _convert(text: str, kind: object) -> object:
    """``text`` as a value of the field type ``kind``; ValueError if it is not one."""
    if kind is bool:
        word = text.strip().lower()
        if word in _TRUE | _FALSE:
            return word in _TRUE
        raise ValueError(text)
    if kind is int:
        return int(text)
    if kind is float:
        return float(text)
    if kind is str:
        return text
    if typing.get_origin(kind) is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:  # tuple[X, ...]: comma-separated
            return tuple(
                _convert(part.strip(), args[0]) for part in text.split(",") if part.strip()
            )
    raise TypeError(f"an option of type {kind!r} cannot be set from the command line")


def _type_name(kind: object) -> str:
    """``kind`` for an error message: "an int", "a bool (true/false)", ..."""
    if typing.get_origin(kind) is tuple:
        return f"a comma-separated list of {_type_name(typing.get_args(kind)[0]).split()[-1]}"
    if kind is bool:
        return "a bool (true/false)"
    name = str(getattr(kind, "__name__", kind))
    return ("an " if name[0] in "aeiou" else "a ") + name


def parse_options(options: type[OptionsT], settings: Sequence[str]) -> OptionsT:
    """``options()`` with each ``KEY=VALUE`` of ``settings`` set, converted by field type.

    A field may be ``int``, ``float``, ``bool`` (1/0, true/false, yes/no,
    on/off), ``str`` or ``tuple[X, ...]`` (comma-separated X). A setting
    that names no field or whose value does not convert is a UserError.
    """
    hints = typing.get_type_hints(options)
    names = [f.name for f in dataclasses.fields(options)]
    changes: dict[str, object] = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or key not in names:
            raise UserError(
                f"--set {item!r}: expected KEY=VALUE with KEY one of {', '.join(names) or 'none'}"
            )
        try:
            changes[key] = _convert(value, hints[key])
        except ValueError:
            raise UserError(f"--set {item!r}: {value!r} is not {_type_name(hints[key])}") from None
    return dataclasses.replace(options(), **changes)


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
