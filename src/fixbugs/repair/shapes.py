"""The shape of a change: does a candidate fix the failing path, or only hide it?

A weak test suite passes patches that make the failure go away without
fixing anything (issue 23): catching the failing exception and discarding
it, negating a whole condition, returning a constant. :func:`classify_change`
reads that shape off the old and new text of one file, whoever wrote the
change (a template, the model, a caller's diff: :func:`classify_diff`), so
such a candidate is never the lead fix (:mod:`fixbugs.stages.validate`).

It compares the two ``ast`` trees statement list by statement list and looks
only at what changed there:

- ``swallows``: a ``try`` added around existing code (or an existing ``try``
  stretched over more of it, or ``contextlib.suppress``) whose new handler
  only discards the error: ``pass``, ``return``/``return <constant>``,
  ``continue``, ``break``, a log-only call; or an existing handler widened
  or rewritten so that it discards. A handler that raises, or does anything
  else (assigns a fallback, calls real code), handles the error: not this.
- ``negates_condition``: an ``if``/``while``/``assert``/conditional
  expression test, or a returned condition, replaced by its negation as a
  whole (``not (...)`` added or dropped), or an ``if``'s two branches
  swapped. Changing one operator (``==`` to ``!=``) is not this.
- ``returns_constant``: ``return <expr>`` replaced by ``return <constant>``,
  or existing code (a function body, the failing path) replaced by or cut
  short with an unconditional ``return <constant>``. A guard (``if x is
  None: return None``) is conditional: not this.

Pure: text in, a :class:`ChangeShape` (or ``None``) out.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from fixbugs.diffs import apply_to_text, changed_window, diff_files
from fixbugs.repair.changed_ast import changed_lists, node_key, node_text, text_lines

__all__ = [
    "SHAPE_LABELS",
    "ChangeShape",
    "ShapeKind",
    "classify_change",
    "classify_diff",
]

ShapeKind = Literal["swallows", "negates_condition", "returns_constant"]

# how a verdict names each shape, after "a candidate that ..."
SHAPE_LABELS: dict[ShapeKind, str] = {
    "swallows": "swallows the exception",
    "negates_condition": "negates a whole condition",
    "returns_constant": "returns a constant",
}

# when one change has several shapes, the one named is the first of these
_PRIORITY: tuple[ShapeKind, ...] = ("swallows", "returns_constant", "negates_condition")


@dataclass(frozen=True, slots=True)
class ChangeShape:
    """A change that passes tests by hiding the failure: which shape, and where, in one line."""

    kind: ShapeKind
    reason: str

    @property
    def label(self) -> str:
        return SHAPE_LABELS[self.kind]


# -- entry points -------------------------------------------------------------


def classify_change(old: str, new: str) -> ChangeShape | None:
    """The shape of rewriting one file's ``old`` text as ``new`` (None: no such shape)."""
    if old == new:
        return None
    a, b = text_lines(old), text_lines(new)
    p, a_hi, b_hi = changed_window(a, b)
    if not _may_have_shape("".join(a[p:a_hi]), "".join(b[p:b_hi]), new):
        return None
    lists = changed_lists(old, new, a, b, p + 1, a_hi)
    if lists is None:
        return None
    found = list(_stmt_lists(*lists))
    for kind in _PRIORITY:
        for shape in found:
            if shape.kind == kind:
                return shape
    return None


def classify_diff(diff: str, files: Mapping[str, str]) -> ChangeShape | None:
    """The shape of a unified ``diff`` over ``files`` (path -> old text), file by file.

    A file the diff names but ``files`` lacks, or whose hunks do not apply
    to its text, is not judged.
    """
    for path in diff_files(diff):
        old = files.get(path)
        if old is None:
            continue
        new = apply_to_text(old, diff, path)
        if new is None:
            continue
        shape = classify_change(old, new)
        if shape is not None:
            return shape
    return None


# -- a cheap look first: most edits cannot have any of the shapes -------------

_ADDED_WORDS = re.compile(r"\b(try|except|suppress|return|not|else)\b")
_REMOVED_WORDS = re.compile(r"\b(not|except|else)\b")


def _may_have_shape(removed: str, added: str, new: str) -> bool:
    if _ADDED_WORDS.search(added) or _REMOVED_WORDS.search(removed):
        return True
    # a handler rewritten to ``pass``/``continue``/a log call needs no keyword of its own
    return "except" in new


# -- walking the two trees ----------------------------------------------------

_BLOCKS = ("body", "orelse", "finalbody", "handlers")


def _stmt_lists(olds: list[ast.stmt], news: list[ast.stmt]) -> Iterator[ChangeShape]:
    """Shapes of the differences between two statement lists (then, recursively, inside)."""
    sm = difflib.SequenceMatcher(
        None, [node_key(s) for s in olds], [node_key(s) for s in news], False
    )
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        a, b = olds[i1:i2], news[j1:j2]
        if len(a) == len(b) and all(type(x) is type(y) for x, y in zip(a, b, strict=True)):
            for x, y in zip(a, b, strict=True):
                yield from _pair(x, y)
        else:
            yield from _block(a, b, followed=j2 < len(news))


def _pair(x: ast.stmt, y: ast.stmt) -> Iterator[ChangeShape]:
    """One statement rewritten as another of the same kind."""
    if node_key(x) == node_key(y):
        return
    yield from _negations(x, y)
    if isinstance(x, ast.If) and isinstance(y, ast.If) and _swapped(x, y):
        yield ChangeShape("negates_condition", f"swaps the if/else branches at line {y.lineno}")
        return
    if isinstance(x, ast.Return) and isinstance(y, ast.Return) and _now_constant(x, y):
        old, new = node_text(x.value), node_text(y.value)
        yield ChangeShape(
            "returns_constant", f"replaces return {old} with return {new} at line {y.lineno}"
        )
    if isinstance(x, ast.Try | ast.TryStar) and isinstance(y, ast.Try | ast.TryStar):
        yield from _handlers_changed(x, y)
        if len(x.handlers) == len(y.handlers):
            for hx, hy in zip(x.handlers, y.handlers, strict=True):
                yield from _stmt_lists(hx.body, hy.body)
    for name in ("body", "orelse", "finalbody"):
        bx, by = getattr(x, name, None), getattr(y, name, None)
        if isinstance(bx, list) and isinstance(by, list):
            yield from _stmt_lists(bx, by)


def _swapped(x: ast.If, y: ast.If) -> bool:
    """The same test, its two branches swapped (a negation of the whole condition)."""
    return bool(x.orelse) and (
        node_key(x.test) == node_key(y.test)
        and node_key(x.body) == node_key(y.orelse)
        and node_key(x.orelse) == node_key(y.body)
    )


def _now_constant(x: ast.Return, y: ast.Return) -> bool:
    """``return <expression>`` became ``return <constant>``."""
    return (
        x.value is not None
        and y.value is not None
        and _constant(y.value)
        and not _constant(x.value)
    )


def _block(a: list[ast.stmt], b: list[ast.stmt], *, followed: bool) -> Iterator[ChangeShape]:
    """Statements ``a`` replaced by statements ``b`` of other kinds (either may be empty)."""
    old_keys = {node_key(s) for top in a for s in ast.walk(top) if isinstance(s, ast.stmt)}
    old_text = "\n".join(node_text(s, 10_000) for s in a)
    for top in b:
        for s in ast.walk(top):
            if not isinstance(s, ast.Try | ast.TryStar | ast.With | ast.AsyncWith):
                continue
            if node_key(s) in old_keys:
                continue  # the same statement as before, only moved
            if isinstance(s, ast.Try | ast.TryStar) and _wraps(s.body, old_keys, old_text):
                what = _first_discarding(s.handlers)
                if what is not None:
                    types, does = what
                    yield ChangeShape(
                        "swallows",
                        f"wraps existing code at line {s.lineno} in try/except {types}, "
                        f"whose handler only {does}",
                    )
            elif isinstance(s, ast.With | ast.AsyncWith) and _wraps(s.body, old_keys, old_text):
                sup = [i.context_expr for i in s.items if _is_suppress(i.context_expr)]
                if sup:
                    yield ChangeShape(
                        "swallows",
                        f"wraps existing code at line {s.lineno} in {node_text(sup[0])}",
                    )
    # an unconditional ``return <constant>`` in place of existing code, or cutting it short
    substantive = [s for s in a if not _inert(s)]
    for i, s in enumerate(b):
        if isinstance(s, ast.Return) and s.value is not None and _constant(s.value):
            if substantive:
                yield ChangeShape(
                    "returns_constant",
                    f"replaces the code at line {s.lineno} with return {node_text(s.value)}",
                )
            elif followed or i < len(b) - 1:
                yield ChangeShape(
                    "returns_constant",
                    f"returns {node_text(s.value)} at line {s.lineno}, before the code after it",
                )
            break


def _wraps(body: list[ast.stmt], old_keys: set[str], old_text: str) -> bool:
    """``body`` holds code the change took from its old place (exactly, or nearly so)."""
    if not old_keys:
        return False
    if any(
        node_key(s) in old_keys for top in body for s in ast.walk(top) if isinstance(s, ast.stmt)
    ):
        return True
    new_text = "\n".join(node_text(s, 10_000) for s in body)
    # bounded: a quadratic match of two long texts would cost more than it tells
    return difflib.SequenceMatcher(None, old_text[:2000], new_text[:2000], False).ratio() >= 0.75


def _handlers_changed(x: ast.Try | ast.TryStar, y: ast.Try | ast.TryStar) -> Iterator[ChangeShape]:
    """An existing ``try`` whose handlers now discard what they did not discard before."""
    old_keys = {node_key(h) for h in x.handlers}
    # the exceptions the old handlers already discarded: discarding them still is no change
    dropped = {_type_key(h) for h in x.handlers if _discards(h.body) is not None}
    for i, h in enumerate(y.handlers):
        if node_key(h) in old_keys or _type_key(h) in dropped:
            continue
        does = _discards(h.body)
        if does is None:
            continue
        types = _types(h)
        if i < len(x.handlers):
            why = f"changes the handler at line {h.lineno} to except {types}, which only {does}"
        else:
            why = f"adds except {types} at line {h.lineno}, which only {does}"
        yield ChangeShape("swallows", why)
        return


def _first_discarding(handlers: list[ast.ExceptHandler]) -> tuple[str, str] | None:
    """(exception types, what it does) of the first handler that only discards the error."""
    for h in handlers:
        does = _discards(h.body)
        if does is not None:
            return _types(h), does
    return None


def _type_key(h: ast.ExceptHandler) -> str:
    return node_key(h.type) if h.type is not None else ""


def _types(h: ast.ExceptHandler) -> str:
    return node_text(h.type, 40) if h.type is not None else "(bare)"


# -- what a handler does ------------------------------------------------------

_LOG_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"}
)


def _discards(body: list[ast.stmt]) -> str | None:
    """What ``body`` does with the error, when all it does is drop it (None: it handles it)."""
    parts: list[str] = []
    for s in body:
        if isinstance(s, ast.Pass):
            parts.append("passes")
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            parts.append("passes")  # a docstring or ``...``
        elif isinstance(s, ast.Continue):
            parts.append("continues the loop")
        elif isinstance(s, ast.Break):
            parts.append("breaks the loop")
        elif isinstance(s, ast.Return) and (s.value is None or _constant(s.value)):
            parts.append(
                f"returns {node_text(s.value)}".rstrip() if s.value is not None else "returns"
            )
        elif isinstance(s, ast.Expr) and _is_log_call(s.value):
            parts.append("logs the error")
        else:
            return None
    seen: dict[str, None] = dict.fromkeys(parts)
    return " and ".join(seen) if seen else None


def _is_log_call(e: ast.expr) -> bool:
    if not isinstance(e, ast.Call):
        return False
    f = e.func
    if isinstance(f, ast.Name):
        return f.id == "print"
    if isinstance(f, ast.Attribute):
        if f.attr in _LOG_METHODS or f.attr == "print_exc":
            return True
        if f.attr == "write" and isinstance(f.value, ast.Attribute):
            return f.value.attr in ("stderr", "stdout")
    return False


def _is_suppress(e: ast.expr) -> bool:
    if not isinstance(e, ast.Call):
        return False
    f = e.func
    return (isinstance(f, ast.Name) and f.id == "suppress") or (
        isinstance(f, ast.Attribute) and f.attr == "suppress"
    )


def _inert(s: ast.stmt) -> bool:
    return isinstance(s, ast.Pass) or (
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
    )


_EMPTY_CALLS = frozenset(
    {"dict", "list", "set", "tuple", "str", "int", "float", "bool", "frozenset"}
)


def _constant(e: ast.expr) -> bool:
    """A value fixed in the source: a literal, an empty container, ``None``/``True``/``False``."""
    if isinstance(e, ast.Constant):
        return True
    if isinstance(e, ast.Name):
        return e.id in ("None", "True", "False")
    if isinstance(e, ast.UnaryOp):
        return _constant(e.operand)
    if isinstance(e, ast.List | ast.Tuple | ast.Set):
        return all(_constant(x) for x in e.elts)
    if isinstance(e, ast.Dict):
        return all(k is not None and _constant(k) for k in e.keys) and all(
            _constant(v) for v in e.values
        )
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name):
        return e.func.id in _EMPTY_CALLS and not e.args and not e.keywords
    return False


# -- negations ----------------------------------------------------------------

_TESTS: dict[type, str] = {
    ast.If: "if",
    ast.While: "while",
    ast.IfExp: "conditional",
    ast.Assert: "assert",
}


def _negations(x: ast.stmt, y: ast.stmt) -> Iterator[ChangeShape]:
    """A whole condition of ``x``'s own line (not its body) replaced by its negation."""
    for a, b, parent, field in _diffs(x, y, None, ""):
        if not (isinstance(a, ast.expr) and isinstance(b, ast.expr) and _negated(a, b)):
            continue
        where: str | None = None
        if field == "test" and type(parent) in _TESTS:
            where = f"the whole {_TESTS[type(parent)]} condition"
        elif field == "value" and isinstance(parent, ast.Return):
            where = "the whole returned condition"
        elif field == "ifs" and isinstance(parent, ast.comprehension):
            where = "the whole comprehension condition"
        if where is not None:
            yield ChangeShape(
                "negates_condition",
                f"negates {where} at line {b.lineno}: {node_text(a)} -> {node_text(b)}",
            )


def _negated(a: ast.expr, b: ast.expr) -> bool:
    """One is ``not`` the other, as a whole."""
    return _is_not_of(b, a) or _is_not_of(a, b)


def _is_not_of(e: ast.expr, inner: ast.expr) -> bool:
    return (
        isinstance(e, ast.UnaryOp)
        and isinstance(e.op, ast.Not)
        and node_key(e.operand) == node_key(inner)
    )


def _diffs(
    a: object, b: object, parent: ast.AST | None, field: str
) -> Iterator[tuple[object, object, ast.AST | None, str]]:
    """The smallest differing parts of ``a`` and ``b``, with the node and field holding each.

    Statement bodies are left out: they are compared as statement lists.
    """
    if isinstance(a, ast.AST) and isinstance(b, ast.AST):
        if type(a) is not type(b):
            yield a, b, parent, field
            return
        if node_key(a) == node_key(b):
            return
        for name in a._fields:
            if isinstance(a, ast.stmt | ast.ExceptHandler) and name in _BLOCKS:
                continue
            va, vb = getattr(a, name, None), getattr(b, name, None)
            if isinstance(va, list) and isinstance(vb, list):
                if len(va) != len(vb):
                    yield a, b, parent, field
                    return
                for ea, eb in zip(va, vb, strict=True):
                    yield from _diffs(ea, eb, a, name)
            else:
                yield from _diffs(va, vb, a, name)
    elif a != b:
        yield a, b, parent, field
