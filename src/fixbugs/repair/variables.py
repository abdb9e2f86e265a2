"""Same-kind replacement templates: variables, attributes and methods in scope, and swaps.

A wrong name is among the commonest one-token bugs (TBar's "mutate variable"
and "mutate method invocation" families): a variable replaced by another one
the function binds, an attribute by another one seen on the same base in the
repository, a method by its usual confusable (``startswith``/``endswith``),
or two variables read in the region swapped.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from fixbugs.repair.source import Edit, SourceFile
from fixbugs.repair.templates import METHOD_SWAPS

__all__ = ["name_edits", "swap_edits"]


def _function_of(src: SourceFile, node: ast.AST) -> ast.AST | None:
    return src.enclosing(node, (ast.FunctionDef, ast.AsyncFunctionDef))


def _names_in_scope(src: SourceFile, node: ast.AST) -> list[str]:
    fn = _function_of(src, node)
    names: dict[str, None] = {}
    if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs):
            names.setdefault(a.arg, None)
        for star in (fn.args.vararg, fn.args.kwarg):
            if star is not None:
                names.setdefault(star.arg, None)
        for sub in ast.walk(fn):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.setdefault(sub.id, None)
    return list(names)


def name_edits(
    src: SourceFile, nodes: list[ast.AST], attr_index: dict[str, set[str]] | None = None
) -> Iterator[Edit]:
    """Replace a variable, attribute or called method with one of the same kind in scope."""
    attrs = attr_index or {}
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            parent = src.parents.get(node)
            if isinstance(parent, ast.Call) and parent.func is node:
                continue
            for other in _names_in_scope(src, node):
                if other != node.id:
                    e = src.replace(node, other, "name", f"`{node.id}` -> `{other}`")
                    if e:
                        yield e
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            base = src.segment(node.value)
            sp = src.span(node)
            if sp is None:
                continue
            parent = src.parents.get(node)
            called = isinstance(parent, ast.Call) and parent.func is node
            options = list(METHOD_SWAPS.get(node.attr, ())) if called else []
            if not called:
                options += sorted(attrs.get(base, set()) - {node.attr})
            for other in options:
                rep = f"{base}.{other}"
                e = src.replace(node, rep, "name", f"`.{node.attr}` -> `.{other}`")
                if e:
                    yield e
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            for other in METHOD_SWAPS.get(node.func.id, ()):
                if hasattr(builtins, other):
                    e = src.replace(node.func, other, "name", f"`{node.func.id}` -> `{other}`")
                    if e:
                        yield e


def _called(src: SourceFile, node: ast.AST) -> bool:
    parent = src.parents.get(node)
    return isinstance(parent, ast.Call) and parent.func is node


def _in_annotation(src: SourceFile, node: ast.AST) -> bool:
    child, cur = node, src.parents.get(node)
    while cur is not None and not isinstance(cur, ast.stmt):
        if isinstance(cur, ast.arg) and cur.annotation is child:
            return True
        child, cur = cur, src.parents.get(cur)
    if isinstance(cur, ast.FunctionDef | ast.AsyncFunctionDef) and cur.returns is child:
        return True
    return isinstance(cur, ast.AnnAssign) and cur.annotation is child


def swap_edits(
    src: SourceFile, nodes: list[ast.AST], *, limit: int = 24, reach: int = 3
) -> Iterator[Edit]:
    """Swap two different variables read in the region (``dict(a); x.update(b)``).

    Only variables: never a builtin (``str``, ``IndexError``) nor a name in
    an annotation; and only two reads at most ``reach`` lines apart (a swap
    across a whole function is no longer a mix-up of two names).
    """
    names = [
        n
        for n in nodes
        if isinstance(n, ast.Name)
        and isinstance(n.ctx, ast.Load)
        and src.span(n) is not None
        and not _called(src, n)
        and not hasattr(builtins, n.id)
        and not _in_annotation(src, n)
    ]
    made = 0
    for i, n1 in enumerate(names):
        for n2 in names[i + 1 :]:
            if n1.id == n2.id or made >= limit or n2.lineno - n1.lineno > reach:
                continue
            s1, s2 = src.span(n1), src.span(n2)
            assert s1 is not None and s2 is not None
            between = src.text[s1[1] : s2[0]]
            a, b = n1.lineno, n2.end_lineno or n2.lineno
            e = src.replace_span(
                (s1[0], s2[1]), a, b, n2.id + between + n1.id, "swap",
                f"swap `{n1.id}` (line {a}) and `{n2.id}` (line {b})",
            )  # fmt: skip
            if e:
                made += 1
                yield e
