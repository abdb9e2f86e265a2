"""Each function of a module (and its top-level code) as a :class:`Scope`, old beside new.

The verdict's shape checks (:mod:`fixbugs.repair.demotions`,
:mod:`fixbugs.repair.conditions`) compare a changed function with itself:
:func:`scope_pairs` matches the scopes of the buggy and the patched text by
qualified name and keeps those whose own statements changed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from fixbugs.repair.changed_ast import node_key, parse_module

__all__ = ["NESTED", "Scope", "scope_pairs"]


@dataclass(frozen=True, slots=True)
class Scope:
    """A function, or the module's top-level code: its node, its own statements' keys."""

    name: str
    node: ast.AST

    def own(self) -> Iterator[ast.AST]:
        """Its nodes, not those of the functions defined in it (a class body's are)."""
        stack = list(ast.iter_child_nodes(self.node))
        while stack:
            n = stack.pop()
            yield n
            if not isinstance(n, NESTED):
                stack.extend(ast.iter_child_nodes(n))


# a scope's own code stops at the functions defined in it (each is a scope of its own)
NESTED = (ast.FunctionDef, ast.AsyncFunctionDef)


def scope_pairs(old: str, new: str) -> list[tuple[Scope, Scope]]:
    """The scopes whose code changed, old and new, matched by qualified name."""
    t0, t1 = parse_module(old), parse_module(new)
    if t0 is None or t1 is None:
        return []
    s0, s1 = _scopes(t0), _scopes(t1)
    return [(s0[n], s1[n]) for n in s1 if n in s0 and _own_key(s0[n]) != _own_key(s1[n])]


def _scopes(tree: ast.Module) -> dict[str, Scope]:
    out = {"<module>": Scope("<module>", tree)}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out.setdefault(name, Scope(name, child))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def _own_key(s: Scope) -> str:
    return "|".join(sorted(node_key(n) for n in s.own() if isinstance(n, ast.stmt)))
