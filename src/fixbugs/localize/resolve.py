"""Names resolved through the module graph to where they are defined.

``from sympy import Symbol`` names ``sympy/__init__.py``, which defines no
``Symbol``: it re-exports one (``from .core import *``, then
``from .symbol import Symbol`` in ``sympy/core/__init__.py``). A report's
code and prose use the public names, so every signal that reads them asks
the same question this module answers: which file, class or function does
``module.name`` end at, following ``from … import`` re-exports (relative
ones and star imports included) until a module defines it.

A :class:`Target` is either a module (its file) or a symbol. Pure
functions of the repository index (:class:`fixbugs.index.RepoIndex`).
"""

from __future__ import annotations

from dataclasses import dataclass

from fixbugs.index import RepoIndex, Symbol

__all__ = ["MAX_HOPS", "Target", "dotted_target", "member", "resolve_name"]

MAX_HOPS = 8  # re-export chains longer than this are not followed


@dataclass(frozen=True, slots=True)
class Target:
    """What a name ends at: a module's file (``symbol`` None) or a symbol in it."""

    path: str
    symbol: Symbol | None = None

    @property
    def is_class(self) -> bool:
        return self.symbol is not None and self.symbol.kind == "class"


def resolve_name(index: RepoIndex, module: str, name: str) -> Target | None:
    """Where ``module.name`` is defined: a symbol of the module, a submodule, or what one
    of its imports re-exports under that name (named imports before star imports).

    A depth-first search that visits each module at most once: re-export graphs
    (a package's ``__init__`` star-importing every subpackage) are wide, and a
    name that none defines must not cost more than one pass over them.
    """
    return _resolve(index, module, name, set(), 0)


def _resolve(index: RepoIndex, module: str, name: str, seen: set[str], depth: int) -> Target | None:
    if module in seen or depth > MAX_HOPS:
        return None
    seen.add(module)
    sub = index.file_of_module(f"{module}.{name}" if module else name)
    path = index.file_of_module(module) if module else None
    if path is None:
        return Target(sub) if sub else None
    own = index.symbol(name, path)
    if own is not None:
        return Target(path, own)
    stars: list[str] = []
    entry = index.entry(path)
    for ref in entry.imports if entry is not None else ():
        base = ref.module  # absolute: the index resolved relative imports
        if "*" in ref.names:
            stars.append(base)
        elif name in ref.names:
            found = _resolve(index, base, name, seen, depth + 1)
            if found is not None:
                return found
    if sub:
        return Target(sub)
    for base in stars:
        found = _resolve(index, base, name, seen, depth + 1)
        if found is not None:
            return found
    return None


def dotted_target(index: RepoIndex, dotted: str) -> Target | None:
    """``pkg.mod.Class.method`` → the method: the longest module prefix, then members."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        path = index.file_of_module(module)
        if path is None:
            continue
        target: Target | None = Target(path)
        owner = module
        for part in parts[cut:]:
            target = member(index, target, part, owner)
            if target is None:
                break
            owner = ""
        if target is not None:
            return target
    return None


def member(index: RepoIndex, base: Target | None, attr: str, module: str = "") -> Target | None:
    """``base.attr``: a module's name (``module`` given), or a class's member (inherited too)."""
    if base is None:
        return None
    if base.symbol is None:
        mod = module or index.module_of(base.path) or ""
        return resolve_name(index, mod, attr) if mod else None
    if base.symbol.kind != "class":
        return None
    found = index.resolve_member(base.symbol, attr)
    return Target(found.path, found) if found is not None else None
