"""Simplifying templates: an expression replaced by a part of itself, or by a sibling's value.

Many one-token fixes take something *away* rather than add it: an attribute
read one level too deep (``f"{src.name}"`` where the whole path was meant),
a method call that the value never needed, a hard-coded constant where the
function already uses the right one a line above (``column += 4`` beside
``column += 1``), a string index that fails on an empty string where a
slice would not (``s[-1]`` vs ``s[-1:]``), a hard-coded prefix length
(``"open http://" + s[5:]`` only works when ``s`` starts with ``"open "``),
a loop over ``s.split(",")`` that meets ``['']`` when ``s`` is empty, or a
``try`` whose fallback path is the behaviour the caller wanted. The families
here propose each of these where the region's ``ast`` has the shape; like
every template, nothing here runs code and every edit is re-parsed before
it becomes a candidate.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from fixbugs.repair.source import Edit, SourceFile, parses

__all__ = [
    "fallback_edits",
    "index_slice_edits",
    "local_constant_edits",
    "prefix_slice_edits",
    "split_empty_edits",
    "unwrap_edits",
]

# receivers whose attributes are the object's state: `self.x` -> `self` is never a fix
_SELF = frozenset({"self", "cls"})
# a try longer than this wraps a whole job: replacing it by its handler is no small fix
_MAX_TRY_LINES = 15
# calls whose single argument may be what was meant (a conversion or a copy)
_WRAPPERS = frozenset({"int", "str", "float", "list", "tuple", "set", "len", "bool", "repr"})


def _is_call_func(src: SourceFile, node: ast.AST) -> bool:
    parent = src.parents.get(node)
    return isinstance(parent, ast.Call) and parent.func is node


def _imported(src: SourceFile) -> set[str]:
    """Names the module binds by ``import``: ``datetime.datetime`` -> ``datetime`` is no fix."""
    out: set[str] = set()
    for node in ast.walk(src.tree) if src.tree is not None else ():
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
    return out


def unwrap_edits(src: SourceFile, nodes: list[ast.AST]) -> Iterator[Edit]:
    """An attribute read, an argument-less method call or a conversion, replaced by its base."""
    skip = _SELF | _imported(src)
    for node in nodes:
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id not in skip
            and not _is_call_func(src, node)
        ):
            base = src.segment(node.value)
            e = src.replace(node, base, "unwrap", f"`{src.segment(node)}` -> `{base}`")
            if e:
                yield e
            e = _unwrap_all(src, node, base)
            if e:
                yield e
        elif isinstance(node, ast.Call) and not node.keywords:
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and not node.args
                and not (isinstance(func.value, ast.Name) and func.value.id in skip)
            ):
                inner = func.value
            elif (
                isinstance(func, ast.Name)
                and func.id in _WRAPPERS
                and len(node.args) == 1
                and not isinstance(node.args[0], ast.Starred)
            ):
                inner = node.args[0]
            else:
                continue
            base = src.segment(inner)
            if "\n" in base:
                continue
            e = src.replace(node, base, "unwrap", f"`{src.segment(node)}` -> `{base}`")
            if e:
                yield e


def _unwrap_all(src: SourceFile, node: ast.Attribute, base: str) -> Edit | None:
    """Every read of the same ``x.attr`` in the function unwrapped at once (from its first).

    One wrong attribute is often written twice (``f"{src.name} (original)"``
    and ``f"{src.name} (formatted)"``); one edit that fixes only one of them
    fails the same test.
    """
    fn = src.enclosing(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    if fn is None:
        return None
    text = src.segment(node)
    same = sorted(
        (
            n
            for n in ast.walk(fn)
            if isinstance(n, ast.Attribute)
            and isinstance(n.ctx, ast.Load)
            and not _is_call_func(src, n)
            and src.segment(n) == text
        ),
        key=lambda n: (n.lineno, n.col_offset),
    )
    if len(same) < 2 or same[0] is not node:
        return None
    new = src.text
    for n in reversed(same):
        sp = src.span(n)
        if sp is None:
            return None
        new = new[: sp[0]] + base + new[sp[1] :]
    if not parses(new):
        return None
    last = same[-1].end_lineno or same[-1].lineno
    why = f"`{text}` -> `{base}` ({len(same)} times)"
    return Edit(src.path, node.lineno, last, new, "unwrap", why)


def _target_of(src: SourceFile, node: ast.AST) -> str | None:
    """The name a constant is assigned or added to (`x += 4`, `x = 4`), if that is its role."""
    parent = src.parents.get(node)
    if isinstance(parent, ast.AugAssign) and parent.value is node:
        return src.segment(parent.target)
    if isinstance(parent, ast.Assign) and parent.value is node and len(parent.targets) == 1:
        return src.segment(parent.targets[0])
    return None


def local_constant_edits(
    src: SourceFile, nodes: list[ast.AST], *, limit: int = 4
) -> Iterator[Edit]:
    """An integer constant that updates a variable, replaced by another value the same
    function gives that variable (``col += 4`` beside ``col += 1``).

    Only constants in that role: any other constant of the function would be
    a guess; ±1 is :func:`fixbugs.repair.templates.constant_edits`' job.
    """
    # per function, the values each variable is given: one walk of a function, not one per constant
    given: dict[int, dict[str, dict[int, None]]] = {}
    for node in nodes:
        if not (isinstance(node, ast.Constant) and type(node.value) is int):
            continue
        target = _target_of(src, node)
        fn = src.enclosing(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        if target is None or fn is None:
            continue
        if id(fn) not in given:
            table: dict[str, dict[int, None]] = {}
            for other in ast.walk(fn):
                if isinstance(other, ast.Constant) and type(other.value) is int:
                    t = _target_of(src, other)
                    if t is not None:
                        table.setdefault(t, {}).setdefault(other.value, None)
            given[id(fn)] = table
        n = node.value
        values = [v for v in given[id(fn)].get(target, {}) if v not in (n, n + 1, n - 1)]
        for v in values[:limit]:
            why = f"`{n}` -> `{v}` (as the function does for `{target}`)"
            e = src.replace(node, str(v), "constant", why)
            if e:
                yield e


def index_slice_edits(
    src: SourceFile, nodes: list[ast.AST], exceptions: tuple[str, ...]
) -> Iterator[Edit]:
    """``s[k]`` as the one-item slice ``s[k:k+1]``, which an empty string cannot make fail.

    Only where the failing run raised ``IndexError``: elsewhere it would
    change a value's type for nothing.
    """
    if "IndexError" not in exceptions:
        return
    for node in nodes:
        if not (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)):
            continue
        idx = node.slice
        k: int | None = None
        if isinstance(idx, ast.Constant) and type(idx.value) is int:
            k = idx.value
        elif (
            isinstance(idx, ast.UnaryOp)
            and isinstance(idx.op, ast.USub)
            and isinstance(idx.operand, ast.Constant)
            and type(idx.operand.value) is int
        ):
            k = -idx.operand.value
        if k is None:
            continue
        sliced = f"{k}:" if k == -1 else f"{k}:{k + 1}"
        rep = f"{src.segment(node.value)}[{sliced}]"
        e = src.replace(node, rep, "index_slice", f"index `[{k}]` -> one-item slice `[{sliced}]`")
        if e:
            yield e


def prefix_slice_edits(src: SourceFile, nodes: list[ast.AST]) -> Iterator[Edit]:
    """``"lit" + s[n:]`` assumes ``s`` starts with ``"lit"[:n]``: replace that prefix instead."""
    for node in nodes:
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
            continue
        lit, sub = node.left, node.right
        if not (
            isinstance(lit, ast.Constant)
            and isinstance(lit.value, str)
            and isinstance(sub, ast.Subscript)
            and isinstance(sub.slice, ast.Slice)
            and sub.slice.upper is None
            and sub.slice.step is None
            and isinstance(sub.slice.lower, ast.Constant)
            and type(sub.slice.lower.value) is int
        ):
            continue
        n = sub.slice.lower.value
        if not 0 < n <= len(lit.value):
            continue
        head = lit.value[:n]
        rep = f"{src.segment(sub.value)}.replace({head!r}, {src.segment(lit)}, 1)"
        e = src.replace(
            node, rep, "prefix_replace", f"replace the assumed prefix `{head}` wherever it is"
        )
        if e:
            yield e


def split_empty_edits(src: SourceFile, nodes: list[ast.AST]) -> Iterator[Edit]:
    """A loop over ``s.split(sep)`` that skips an empty ``s`` (which splits into ``['']``)."""
    for node in nodes:
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("split", "rsplit")
            and node.args
            and not isinstance(node.func.value, ast.Constant)
        ):
            continue
        parent = src.parents.get(node)
        if not (isinstance(parent, ast.comprehension | ast.For) and parent.iter is node):
            continue
        whole, base = src.segment(node), src.segment(node.func.value)
        if "\n" in whole:
            continue
        rep = f"({whole} if {base} else [])"
        e = src.replace(node, rep, "empty_split", f"an empty `{base}` splits into nothing")
        if e:
            yield e


def _handler_body(src: SourceFile, handler: ast.ExceptHandler, indent: str) -> str | None:
    """The handler's statements re-indented to the ``try``'s level (None if it only exits)."""
    if all(isinstance(s, ast.Pass | ast.Raise | ast.Continue | ast.Break) for s in handler.body):
        return None
    first, last = handler.body[0].lineno, handler.body[-1].end_lineno or handler.body[-1].lineno
    inner = src.indent_of(first)
    out = []
    for line in src.lines[first - 1 : last]:
        if line.strip() and not line.startswith(inner):
            return None
        out.append(indent + line[len(inner) :] if line.strip() else line)
    return "".join(out)


def fallback_edits(src: SourceFile, stmts: list[ast.stmt]) -> Iterator[Edit]:
    """A ``try`` replaced by its one handler's code: always take the fallback path."""
    seen: set[int] = set()
    for stmt in stmts:
        tr = stmt if isinstance(stmt, ast.Try) else src.enclosing(stmt, (ast.Try,))
        if not isinstance(tr, ast.Try) or id(tr) in seen or len(tr.handlers) != 1 or tr.finalbody:
            continue
        seen.add(id(tr))
        end = tr.end_lineno or tr.lineno
        if end - tr.lineno > _MAX_TRY_LINES:
            continue
        indent = src.indent_of(tr.lineno)
        body = _handler_body(src, tr.handlers[0], indent)
        if body is None:
            continue
        e = src.replace_lines(
            tr.lineno, end, body, "fallback", f"the `try` at line {tr.lineno} -> its handler's code"
        )
        if e:
            yield e
