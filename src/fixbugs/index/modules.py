"""Dotted module names of a tree's Python files, and relative imports made absolute.

A file's module is found the way Python's import system would find it from
the top of its package: ``sympy/core/basic.py`` is ``sympy.core.basic``
when ``sympy/`` and ``sympy/core/`` hold an ``__init__.py``; in a ``src/``
layout ``src/pkg/mod.py`` is ``pkg.mod``; a script outside any package is
its own stem. Pure: the set of paths in, names out.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import PurePosixPath

__all__ = ["absolute_import", "module_aliases", "module_names"]


def module_names(paths: Collection[str]) -> dict[str, str]:
    """``path -> dotted module`` for every ``.py`` path (packages by their ``__init__.py``)."""
    present = set(paths)
    out: dict[str, str] = {}
    for path in paths:
        if not path.endswith(".py"):
            continue
        parts = list(PurePosixPath(path).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]  # a package is named by its folder
        start = len(parts) - 1
        # climb while the folder above is a package
        while start > 0 and "/".join([*parts[:start], "__init__.py"]) in present:
            start -= 1
        # parts[start] is the top: its folder needs no __init__ of its own
        name = ".".join(parts[max(start, 0) :])
        if name:
            out[path] = name
    return out


def module_aliases(paths: Iterable[str], names: dict[str, str]) -> dict[str, str]:
    """``dotted -> path``: each file's own module name first, then every dotted tail of
    its path (``src/pkg/mod.py`` is also ``src.pkg.mod``; a namespace package's
    ``pkg/mod.py`` is ``pkg.mod``), first path in sorted order winning."""
    ordered = sorted(p for p in paths if p.endswith(".py"))
    out: dict[str, str] = {}
    for path in ordered:
        if path in names:
            out.setdefault(names[path], path)
    for path in ordered:
        parts = list(PurePosixPath(path).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        for start in range(len(parts)):
            name = ".".join(parts[start:])
            if name:
                out.setdefault(name, path)
    return out


def absolute_import(module: str | None, level: int, here: str, is_package: bool) -> str:
    """``from <dots><module> import`` in module ``here``, as an absolute dotted name.

    One that climbs above the top package keeps its dots (it names no file).
    """
    written = "." * level + (module or "")
    if level == 0:
        return module or ""
    package = here.split(".") if is_package else here.split(".")[:-1]
    up = level - 1
    if up > len(package) or (up == len(package) and not module):
        return written
    base = package[: len(package) - up]
    if not base:
        return written
    return ".".join([*base, *([module] if module else [])])
