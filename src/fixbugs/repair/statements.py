"""Statement-level fix templates: guards, ``try/except`` and deletion.

A guard goes right before the failing statement (``if x is None``, an
empty-sequence check, an index-bounds check) and leaves the function the way
its other exits do (``return``, ``return False``, ``continue`` in a loop). A
``try/except`` wraps the failing statement for exactly the exception the
traceback shows, never a bare ``except``; its handler only discards the
error (``pass`` or an exit), so it swallows the exception
(:mod:`fixbugs.repair.shapes`): high risk, it may show that the failure goes
away there but it is never the lead fix. Deleting a statement deletes the
failing path and is marked high-risk. A comprehension whose items reach a
call as ``None`` (the failure says ``'NoneType' object``) may skip them,
the guard of one item rather than of the whole statement.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator

from fixbugs.repair.source import Edit, SourceFile

__all__ = ["delete_edits", "guard_edits", "none_item_edits", "try_edits"]

_STEP = "    "


def _exits(src: SourceFile, stmt: ast.stmt) -> list[tuple[str, str]]:
    """Ways to leave at ``stmt``: (code, label), most plausible first."""
    out: list[tuple[str, str]] = []
    if src.in_loop(stmt):
        out.append(("continue", "skip this item"))
    fn = src.enclosing(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
    if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        bools = any(
            isinstance(r, ast.Return)
            and isinstance(r.value, ast.Compare | ast.BoolOp | ast.UnaryOp | ast.Constant)
            and not (isinstance(r.value, ast.Constant) and r.value.value is None)
            for r in ast.walk(fn)
        )
        if bools or fn.name.startswith(("is_", "has_", "match", "can_", "should_")):
            out.append(("return False", "return False"))
        out.append(("return None", "return None"))
        if any(isinstance(r, ast.Return) and isinstance(r.value, ast.List) for r in ast.walk(fn)):
            out.append(("return []", "return an empty list"))
    return out


def _stmt_lines(src: SourceFile, stmt: ast.stmt) -> tuple[int, int]:
    start = stmt.lineno
    if getattr(stmt, "decorator_list", None):
        start = min(d.lineno for d in stmt.decorator_list)  # type: ignore[attr-defined]
    return start, stmt.end_lineno or stmt.lineno


def _guards_for(src: SourceFile, stmt: ast.stmt) -> list[tuple[str, str]]:
    """Conditions worth guarding on, taken from the expressions of ``stmt`` itself."""
    head: list[ast.AST] = []
    if isinstance(stmt, ast.If | ast.While):
        head = [stmt.test]
    elif isinstance(stmt, ast.For):
        head = [stmt.iter]
    elif not isinstance(stmt, ast.Try | ast.With | ast.FunctionDef | ast.ClassDef):
        head = [stmt]
    conds: dict[str, str] = {}
    for root in head:
        for node in ast.walk(root):
            if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
                seq = src.segment(node.value)
                idx = node.slice
                if isinstance(idx, ast.Constant) and isinstance(idx.value, int):
                    n = idx.value
                    bound = f"len({seq}) <= {n}" if n >= 0 else f"len({seq}) < {-n}"
                    conds.setdefault(bound, f"index-bounds check on `{seq}`")
                elif isinstance(idx, ast.UnaryOp) and isinstance(idx.op, ast.USub):
                    conds.setdefault(f"not {seq}", f"empty-sequence check on `{seq}`")
                else:
                    conds.setdefault(f"not {seq}", f"empty-sequence check on `{seq}`")
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                base = node.value
                if isinstance(base, ast.Name | ast.Attribute):
                    b = src.segment(base)
                    conds.setdefault(f"{b} is None", f"None check on `{b}`")
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("pop", "index", "remove")
                and node.args
            ):
                seq = src.segment(node.func.value)
                conds.setdefault(f"not {seq}", f"empty-sequence check on `{seq}`")
    return list(conds.items())[:8]


def guard_edits(src: SourceFile, stmts: list[ast.stmt]) -> Iterator[Edit]:
    """``if <cond>: <exit>`` inserted before a failing statement."""
    for stmt in stmts:
        if isinstance(stmt, ast.Pass | ast.Break | ast.Continue):
            continue
        start, _ = _stmt_lines(src, stmt)
        if src.lines[start - 1].lstrip().startswith(("elif", "else")):
            continue
        indent = src.indent_of(start)
        for cond, why in _guards_for(src, stmt):
            for code, label in _exits(src, stmt):
                block = f"{indent}if {cond}:\n{indent}{_STEP}{code}\n"
                e = src.replace_lines(
                    start, start - 1, block, "guard", f"{why} before line {start}, then {label}"
                )
                if e:
                    yield e


def none_item_edits(src: SourceFile, nodes: list[ast.AST]) -> Iterator[Edit]:
    """``for x in xs`` of a comprehension -> ``for x in xs if x is not None``.

    Offered only where the failure shows a ``None`` used as a value: an item
    that is None is then skipped, where a guard before the statement would
    skip every item.
    """
    kinds = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
    for comp in nodes:
        if not isinstance(comp, kinds):
            continue
        for gen in comp.generators:  # (an ast.comprehension has no position of its own)
            if not isinstance(gen.target, ast.Name):
                continue
            name = gen.target.id
            if any(f"{name} is not None" in src.segment(c) for c in gen.ifs):
                continue
            last = gen.ifs[-1] if gen.ifs else gen.iter
            rep = f"{src.segment(last)} if {name} is not None"
            e = src.replace(last, rep, "none_item", f"skip a `{name}` that is None")
            if e:
                yield e


def _is_builtin_exception(name: str) -> bool:
    obj = getattr(builtins, name, None)
    return isinstance(obj, type) and issubclass(obj, BaseException)


def try_edits(
    src: SourceFile, stmts: list[ast.stmt], exceptions: tuple[str, ...]
) -> Iterator[Edit]:
    """Wrap a failing statement in ``try/except <the traceback's exception>``."""
    excs = [e for e in exceptions if _is_builtin_exception(e) and e != "AssertionError"][:2]
    if not excs:
        return
    for stmt in stmts:
        if isinstance(stmt, ast.If | ast.For | ast.While | ast.With | ast.Try):
            continue  # wrap simple statements only: a compound one is a different change
        start, end = _stmt_lines(src, stmt)
        indent = src.indent_of(start)
        body = "".join(
            (_STEP + line if line.strip() else line) for line in src.lines[start - 1 : end]
        )
        handlers = [("pass", "ignore it"), *_exits(src, stmt)]
        for exc in excs:
            for code, label in handlers:
                block = f"{indent}try:\n{body}{indent}except {exc}:\n{indent}{_STEP}{code}\n"
                # every handler here discards the error: it hides the bug, not fixes it
                e = src.replace_lines(
                    start,
                    end,
                    block,
                    "try_except",
                    f"catch {exc} at line {start}, then {label}",
                    risk="high",
                )
                if e:
                    yield e


def delete_edits(src: SourceFile, stmts: list[ast.stmt]) -> Iterator[Edit]:
    """Delete one simple statement (deletes a path: high-risk)."""
    for stmt in stmts:
        if not isinstance(stmt, ast.Assign | ast.Expr | ast.AugAssign):
            continue
        start, end = _stmt_lines(src, stmt)
        e = src.replace_lines(
            start, end, "", "delete", f"delete the statement at line {start}", risk="high"
        )
        if e:
            yield e
