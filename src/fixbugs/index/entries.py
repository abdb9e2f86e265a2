"""What the index knows of one Python module: its symbols, imports and string literals.

Frozen and hashable, so an index can hand them to any number of readers.
Lines are 1-based and inclusive; a symbol's first line is its first
decorator's, so its span is the code an edit of it may touch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal as _Literal

__all__ = ["ImportRef", "Literal", "ModuleEntry", "Symbol", "SymbolKind"]

SymbolKind = _Literal["class", "function", "method"]


@dataclass(frozen=True, slots=True)
class Symbol:
    """A class, function or method: ``qualname`` is dotted from the module (``Poly.degree``,
    ``outer.inner``); ``bases`` are a class's bases as written (``Expr``, ``core.basic.Basic``)."""

    qualname: str
    name: str
    kind: SymbolKind
    path: str
    start: int
    end: int
    bases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ImportRef:
    """One imported module: ``import m`` (``names`` empty) or ``from m import a, b``.

    ``module`` is absolute where it can be: ``from .x import a`` in ``pkg.mod``
    reads ``pkg.x``; a relative import that climbs above the top package keeps
    its dots (``..x``), so it names no module of the repository. ``level`` is
    the import's own (0 for an absolute import).
    """

    module: str
    names: tuple[str, ...]
    line: int
    level: int = 0


@dataclass(frozen=True, slots=True)
class Literal:
    """A string constant of the code and its line; ``docstring`` marks a module's,
    class's or function's docstring (which a program never prints)."""

    text: str
    line: int
    docstring: bool = False


@dataclass(frozen=True, slots=True)
class ModuleEntry:
    """One parsed ``.py`` file (``parse_error`` set, and the rest empty, when it does not parse).

    ``assigned`` are the module-level capitalized names bound to a call's
    result (``Point = namedtuple(...)``): classes a factory made, which a
    report may name like any class; they are kept apart from ``symbols``
    since they have no body to search.
    """

    path: str
    module: str
    symbols: tuple[Symbol, ...]
    imports: tuple[ImportRef, ...]
    literals: tuple[Literal, ...]
    parse_error: str | None = None
    assigned: tuple[Symbol, ...] = ()
