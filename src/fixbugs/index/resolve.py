"""Names resolved through the module graph to where they are defined: one rule for all.

``from sympy import Symbol`` names ``sympy/__init__.py``, which defines no
``Symbol``: it re-exports one (``from .core import *``, then
``from .symbol import Symbol`` in ``sympy/core/__init__.py``). A report's
code and prose use the public names, and a class's bases are written the
same way (``Expr``, ``core.basic.Basic``, ``Generic[T]`` read as
``Generic``), so every question of the kind "which file, class or function
does this name end at" is answered here, by one rule: a module's own
top-level symbol, then its ``from … import`` statements that name it (their
module absolute: the index resolved relative imports), then its submodule
of that name, then its star imports; ``import a.b`` binds ``a`` for dotted
names. Re-export chains longer than :data:`MAX_HOPS` are not followed, each
search visits a module at most once (a package's ``__init__`` star-importing
every subpackage is wide), and a class walk keeps the classes it has seen,
so an import cycle or a class that is its own base ends it.

Static and partial by design: aliases (``as``) and names bound at run time
are not followed. Pure functions of the repository index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fixbugs.index.entries import Symbol

if TYPE_CHECKING:
    from fixbugs.index.repo_index import RepoIndex

__all__ = [
    "MAX_HOPS",
    "Target",
    "dotted_target",
    "member",
    "name_in_file",
    "resolve_member",
    "resolve_name",
]

MAX_HOPS = 8  # re-export chains longer than this are not followed
_MAX_CLASSES = 64  # classes a member search walks through, at most
_SUBSCRIPT = re.compile(r"[\[(].*$", re.S)


@dataclass(frozen=True, slots=True)
class Target:
    """What a name ends at: a module's file (``symbol`` None) or a symbol in it."""

    path: str
    symbol: Symbol | None = None

    @property
    def is_class(self) -> bool:
        return self.symbol is not None and self.symbol.kind == "class"


def resolve_name(index: RepoIndex, module: str, name: str) -> Target | None:
    """Where ``module.name`` is defined: a symbol of the module, what one of its imports
    re-exports under that name (named imports before star imports), or a submodule."""
    path = index.file_of_module(module) if module else None
    if path is None:
        sub = index.file_of_module(f"{module}.{name}" if module else name)
        return Target(sub) if sub else None
    return _in_file(index, path, module, name, set(), 0)


def _in_file(
    index: RepoIndex, path: str, module: str, name: str, seen: set[str], depth: int
) -> Target | None:
    """``name`` as the module at ``path`` (dotted ``module``, "" when it has none) binds it."""
    if path in seen or depth > MAX_HOPS:
        return None
    seen.add(path)
    own = index.symbol(name, path)
    if own is not None:
        return Target(path, own)
    stars: list[str] = []
    entry = index.entry(path)
    for ref in entry.imports if entry is not None else ():
        if "*" in ref.names:
            stars.append(ref.module)
        elif name in ref.names:
            found = _from_module(index, ref.module, name, seen, depth + 1)
            if found is not None:
                return found
    sub = index.file_of_module(f"{module}.{name}") if module else None
    if sub:
        return Target(sub)
    for base in stars:
        found = _from_module(index, base, name, seen, depth + 1)
        if found is not None:
            return found
    return None


def _from_module(
    index: RepoIndex, module: str, name: str, seen: set[str], depth: int
) -> Target | None:
    """``from module import name``: in the module's file, else its submodule ``name``."""
    path = index.file_of_module(module)
    if path is None:
        sub = index.file_of_module(f"{module}.{name}")
        return Target(sub) if sub else None
    return _in_file(index, path, module, name, seen, depth)


def name_in_file(index: RepoIndex, path: str, dotted: str) -> Target | None:
    """``dotted`` as written in the file at ``path`` (a base class, an annotation):
    its first part bound by the module, then members; ``import a.b`` binds ``a``."""
    dotted = _SUBSCRIPT.sub("", dotted).strip()
    if not dotted:
        return None
    first, *rest = dotted.split(".")
    module = index.module_of(path) or ""
    target = _in_file(index, path, module, first, set(), 0)
    for part in rest:
        target = member(index, target, part)
    if target is not None:
        return target
    entry = index.entry(path)
    if rest and entry is not None:
        bound = any(not r.names and r.module.split(".")[0] == first for r in entry.imports)
        if bound:  # import first.x.y: the longest module prefix, then members
            return dotted_target(index, dotted)
    return None


def dotted_target(index: RepoIndex, dotted: str) -> Target | None:
    """``pkg.mod.Class.method`` → the method: the longest module prefix, then members."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = index.file_of_module(".".join(parts[:cut]))
        if path is None:
            continue
        target: Target | None = Target(path)
        for part in parts[cut:]:
            target = member(index, target, part)
        if target is not None:
            return target
    return None


def member(index: RepoIndex, base: Target | None, attr: str) -> Target | None:
    """``base.attr``: a module's name, or a class's member (inherited too)."""
    if base is None:
        return None
    if base.symbol is None:
        return _in_file(index, base.path, index.module_of(base.path) or "", attr, set(), 0)
    if base.symbol.kind != "class":
        return None
    found = resolve_member(index, base.symbol, attr)
    return Target(found.path, found) if found is not None else None


def resolve_member(index: RepoIndex, cls: Symbol, attr: str) -> Symbol | None:
    """``cls.attr``: defined in the class body, else in its bases, left to right, depth
    first, each base found by :func:`name_in_file` in the file that names it."""
    visited: set[tuple[str, str]] = set()
    stack = [cls]
    while stack and len(visited) <= _MAX_CLASSES:
        here = stack.pop()
        if (here.path, here.qualname) in visited or here.kind != "class":
            continue
        visited.add((here.path, here.qualname))
        own = index.symbol(f"{here.qualname}.{attr}", here.path)
        if own is not None:
            return own
        bases = [name_in_file(index, here.path, b) for b in here.bases]
        stack.extend(b.symbol for b in reversed(bases) if b is not None and b.symbol is not None)
    return None
