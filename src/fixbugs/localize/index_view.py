"""What the localization signals read of the repository index, as typing protocols.

The one index of the repository is :mod:`fixbugs.index` (``RepoIndex``,
built once per run). The signals of this package depend only on the part
of its API written here, so they are pure functions of "an index" and
their tests build the real one over a small tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["ImportView", "IndexView", "SymbolView"]


class SymbolView(Protocol):
    """A class, function or method the repository defines (``start``/``end``: its lines)."""

    @property
    def qualname(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...  # "class" | "function" | "method"
    @property
    def path(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


class ImportView(Protocol):
    """One import statement of a module: ``from <level dots><module> import <names>``."""

    @property
    def module(self) -> str: ...
    @property
    def names(self) -> Sequence[str]: ...
    @property
    def level(self) -> int: ...


class IndexView(Protocol):
    @property
    def paths(self) -> Sequence[str]: ...
    def text(self, path: str) -> str: ...
    def file_of_module(self, dotted: str) -> str | None: ...
    def module_of(self, path: str) -> str | None: ...
    def symbols_named(self, name: str) -> Sequence[SymbolView]: ...
    def symbol(self, qualname: str, path: str | None = None) -> SymbolView | None: ...
    def resolve_member(self, cls: SymbolView, attr: str) -> SymbolView | None: ...
    def imports_of(self, path: str) -> Sequence[ImportView]: ...
