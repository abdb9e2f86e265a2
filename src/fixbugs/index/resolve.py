"""Names of a module followed through its imports: a class's bases, then its members.

Static and partial by design: a base is a dotted name as written
(``Expr``, ``core.basic.Basic``, ``Generic[T]`` read as ``Generic``),
looked up among the module's own top-level classes, then its ``from m
import n`` and ``import a.b`` statements, through re-exports (a package's
``__init__`` importing the class from a submodule). Aliases (``as``) and
names bound at run time are not followed. Every search keeps the set of
(file, name) pairs it has tried, so an import cycle or a class that is its
own base ends it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fixbugs.index.entries import Symbol

if TYPE_CHECKING:
    from fixbugs.index.repo_index import RepoIndex

__all__ = ["resolve_dotted", "resolve_member"]

_SUBSCRIPT = re.compile(r"[\[(].*$", re.S)
_MAX_DEPTH = 64  # bases and re-exports followed, at most


def _top_level(index: RepoIndex, path: str, name: str) -> Symbol | None:
    return index.symbol(name, path)


def resolve_dotted(
    index: RepoIndex, path: str, dotted: str, seen: set[tuple[str, str]] | None = None
) -> Symbol | None:
    """The class or function ``dotted`` names in the module at ``path``, or None."""
    seen = set() if seen is None else seen
    dotted = _SUBSCRIPT.sub("", dotted).strip()
    if not dotted or (path, dotted) in seen or len(seen) > _MAX_DEPTH:
        return None
    seen.add((path, dotted))
    first, _, rest = dotted.partition(".")
    own = _top_level(index, path, first)
    if own is not None:
        return index.symbol(f"{first}.{rest}", path) if rest else own
    entry = index.entry(path)
    if entry is None:
        return None
    for ref in entry.imports:
        if first in ref.names:  # from m import first
            as_module = index.file_of_module(f"{ref.module}.{first}")
            if as_module is not None:
                found = _in_module(index, as_module, rest, seen)
            else:
                target = index.file_of_module(ref.module)
                found = resolve_dotted(index, target, dotted, seen) if target is not None else None
            if found is not None:
                return found
        elif not ref.names and ref.module.split(".")[0] == first:  # import first.x.y
            parts = dotted.split(".")
            for cut in range(len(parts) - 1, 0, -1):  # the longest module prefix first
                target = index.file_of_module(".".join(parts[:cut]))
                if target is not None:
                    found = _in_module(index, target, ".".join(parts[cut:]), seen)
                    if found is not None:
                        return found
    return None


def _in_module(
    index: RepoIndex, path: str, dotted: str, seen: set[tuple[str, str]]
) -> Symbol | None:
    """``dotted`` inside the module at ``path`` (a module alone is no symbol)."""
    return resolve_dotted(index, path, dotted, seen) if dotted else None


def resolve_member(index: RepoIndex, cls: Symbol, attr: str) -> Symbol | None:
    """``cls.attr``: defined in the class body, else in its bases, left to right, depth first."""
    visited: set[tuple[str, str]] = set()
    stack = [cls]
    while stack and len(visited) <= _MAX_DEPTH:
        here = stack.pop()
        if (here.path, here.qualname) in visited or here.kind != "class":
            continue
        visited.add((here.path, here.qualname))
        own = index.symbol(f"{here.qualname}.{attr}", here.path)
        if own is not None:
            return own
        bases = [resolve_dotted(index, here.path, b) for b in here.bases]
        stack.extend(b for b in reversed(bases) if b is not None)
    return None
