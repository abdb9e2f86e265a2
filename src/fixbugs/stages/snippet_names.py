"""The imports a report's snippet leaves out, from the repository it was written against.

Users paste the lines that show a bug, not the imports above them: a
session that calls ``inherits(Foo)`` on ``luigi.Task`` without importing
either, as they had done a screen earlier. Run as pasted, it stops on a
``NameError`` the report never shows, and the bug is not reproduced.

:func:`with_free_names_imported` adds one import per free name (read,
never bound, not a builtin) that the repository answers without doubt:

* a top-level module or package of the repository (``luigi``) is imported
  as itself;
* a class or function that one top-level package exports under that name
  (followed through its re-exports, :func:`fixbugs.index.resolve_name`)
  is imported from the package, as its users write it;
* else a class or function that exactly one module (not a test) defines at
  its top level is imported from that module.

Anything else (a name two modules define, a variable of the user's session,
a star import that may bind it) is left as pasted. Nothing runs here: a
pure function of the snippet's text and the repository's index.
"""

from __future__ import annotations

import ast
import builtins

from agentrt import parse_python
from fixbugs.index import RepoIndex, resolve_name
from fixbugs.index.paths import is_support_path, is_test_path

__all__ = ["free_names", "with_free_names_imported"]

_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__builtins__"}


def free_names(tree: ast.Module) -> tuple[str, ...] | None:
    """Names ``tree`` reads and never binds, in order of first use; None after a star
    import (any name may be bound there)."""
    bound: set[str] = set()
    read: dict[str, tuple[int, int]] = {}  # name -> where it is first read
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                at = (node.lineno, node.col_offset)
                read[node.id] = min(at, read.get(node.id, at))
            else:
                bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    free = [n for n in read if n not in bound and n not in _BUILTINS]
    return tuple(sorted(free, key=read.__getitem__))


def _aside(path: str) -> bool:
    return is_test_path(path) or is_support_path(path)


def _top_packages(index: RepoIndex) -> tuple[str, ...]:
    """The repository's top-level modules and packages: not tests, docs or its setup."""
    tops = {
        module
        for path in index.paths
        if path.endswith(".py")
        and not _aside(path)
        and (module := index.module_of(path)) is not None
        and "." not in module
    }
    return tuple(sorted(tops))


def _import_for(name: str, index: RepoIndex, tops: tuple[str, ...]) -> str | None:
    if name in tops:
        return f"import {name}"
    exported = {
        top
        for top in tops
        if (t := resolve_name(index, top, name)) is not None and t.symbol is not None
    }
    if len(exported) == 1:
        return f"from {exported.pop()} import {name}"
    if exported:
        return None  # two packages export it: which one the user meant is unknown
    modules = {
        module
        for s in index.symbols_named(name)
        if s.qualname == name and not _aside(s.path)
        if (module := index.module_of(s.path)) is not None
    }
    return f"from {modules.pop()} import {name}" if len(modules) == 1 else None


def with_free_names_imported(source: str, index: RepoIndex) -> tuple[str, tuple[str, ...]]:
    """``source`` with an import for each free name the repository answers, and those
    imports (none: ``source`` unchanged)."""
    try:
        tree = parse_python(source)
    except (SyntaxError, ValueError):
        return source, ()
    names = free_names(tree)
    if not names:
        return source, ()
    tops = _top_packages(index)
    imports = tuple(i for n in names if (i := _import_for(n, index, tops)) is not None)
    if not imports:
        return source, ()
    # after a ``from __future__`` import, which must stay the module's first statement
    head = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    lines = source.splitlines(keepends=True)
    cut = (head[-1].end_lineno or 0) if head else 0
    added = "".join(f"{i}\n" for i in imports)
    return "".join(lines[:cut]) + added + "".join(lines[cut:]), imports
