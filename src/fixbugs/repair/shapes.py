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
import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from agentrt import parse_python
from fixbugs.diffs import apply_to_text, changed_window, diff_files

__all__ = [
    "SHAPE_LABELS",
    "ChangeShape",
    "ShapeKind",
    "classify_change",
    "classify_diff",
    "node_key",
    "node_text",
    "parse_module",
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
    a, b = _lines(old), _lines(new)
    p, a_hi, b_hi = changed_window(a, b)
    if not _may_have_shape("".join(a[p:a_hi]), "".join(b[p:b_hi]), new):
        return None
    lists = _changed_lists(old, new, a, b, p + 1, a_hi)
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


def _lines(text: str) -> list[str]:
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _changed_lists(
    old: str, new: str, a: list[str], b: list[str], lo: int, hi: int
) -> tuple[list[ast.stmt], list[ast.stmt]] | None:
    """The old and new statements around old lines ``lo``..``hi`` (``hi = lo - 1``: inserted).

    Parsing a whole file per candidate is slow on a big file, so the
    smallest old statement holding the change is parsed, old and new, on
    its own; the whole files only when no such part parses.
    """
    delta = len(b) - len(a)
    for start, end in _enclosing(old, lo, hi):
        before = _parse_part(a, start, end)
        after = _parse_part(b, start, end + delta) if before is not None else None
        if before is not None and after is not None:
            return before.body, after.body
    t0, t1 = _parse(old), _parse(new)
    if t0 is None or t1 is None:
        return None
    return t0.body, t1.body


@dataclass(frozen=True, slots=True)
class _Span:
    start: int  # first line, decorators included
    end: int
    simple: bool  # a statement without a body of its own
    parent: int | None  # index of the statement around it (None: the module)


def _enclosing(old: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Line spans worth parsing on their own around old lines ``lo``..``hi``, smallest first.

    The smallest old statement holding the change (an insertion strictly
    inside it), then the statement around it; a simple statement is never
    parsed alone but with its parent, so a handler's body is judged with
    its ``try`` and an inserted ``return`` with what follows it.
    """
    spans = _stmt_spans(old)
    if hi >= lo:
        holding = [i for i, t in enumerate(spans) if t.start <= lo and hi <= t.end]
    else:
        holding = [i for i, t in enumerate(spans) if t.start < lo <= t.end]
    if not holding:
        return []
    i: int | None = min(holding, key=lambda j: spans[j].end - spans[j].start)
    out: list[tuple[int, int]] = []
    while i is not None and len(out) < 2:
        if not spans[i].simple:
            out.append((spans[i].start, spans[i].end))
        i = spans[i].parent
    return out


@functools.lru_cache(maxsize=32)
def _stmt_spans(text: str) -> tuple[_Span, ...]:
    tree = _parse(text)
    if tree is None:
        return ()
    nodes: list[ast.stmt] = []
    parent: dict[int, int | None] = {}

    def visit(node: ast.AST, up: int | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                parent[len(nodes)] = up
                nodes.append(child)
                visit(child, len(nodes) - 1)
            else:
                visit(child, up)

    visit(tree, None)
    out = []
    for i, node in enumerate(nodes):
        decorators = getattr(node, "decorator_list", None) or []
        start = min([node.lineno, *(d.lineno for d in decorators)])
        simple = not isinstance(getattr(node, "body", None), list)
        out.append(_Span(start, node.end_lineno or node.lineno, simple, parent[i]))
    return tuple(out)


def _parse_part(lines: list[str], start: int, end: int) -> ast.Module | None:
    """Lines ``start``..``end`` parsed on their own, at their own line numbers.

    The part's first indent is taken off every line that has it (a line in
    a string or a bracket without it is left as is: there it does not matter).
    """
    if not (1 <= start <= end <= len(lines)):
        return None
    first = lines[start - 1]
    indent = first[: len(first) - len(first.lstrip(" \t"))]
    part = [ln[len(indent) :] if ln.startswith(indent) else ln for ln in lines[start - 1 : end]]
    return _parse("\n" * (start - 1) + "".join(part))


@functools.lru_cache(maxsize=64)
def _parse(text: str) -> ast.Module | None:
    # cached: every candidate of a file is compared with the same old text
    try:
        return parse_python(text)
    except (SyntaxError, ValueError):
        return None


_KEY = "_fixbugs_shape_key"


def _key(node: ast.AST | Sequence[ast.AST]) -> str:
    """Structure without positions: the same code at another indent has the same key.

    Kept on the node once computed and built from its children's keys: the
    walk compares a statement, then its body, then the statements in it, and
    an ``ast.dump`` at each level took 145 of 287 profiled seconds of youtube-dl-2's
    candidate generation (a 2,624-line ``common.py``).
    """
    if not isinstance(node, ast.AST):
        return "[" + ", ".join(_key(n) for n in node) + "]"
    done = node.__dict__.get(_KEY)
    if done is not None:
        return done  # type: ignore[no-any-return]
    parts = [type(node).__name__]
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            parts.append(_key(value))
        elif isinstance(value, list):
            parts.append(
                "[" + ", ".join(_key(v) if isinstance(v, ast.AST) else repr(v) for v in value) + "]"
            )
        else:
            parts.append(repr(value))
    key = "(" + " ".join(parts) + ")"
    setattr(node, _KEY, key)
    return key


def _text(node: ast.AST | None, limit: int = 60) -> str:
    if node is None:
        return ""
    try:
        s = " ".join(ast.unparse(node).split())
    except (ValueError, TypeError, AttributeError, RecursionError):
        return "..."
    return s if len(s) <= limit else s[: limit - 3] + "..."


# the helpers other ast checks of a change share (fixbugs.repair.demotions)
node_key = _key
node_text = _text
parse_module = _parse


# -- walking the two trees ----------------------------------------------------

_BLOCKS = ("body", "orelse", "finalbody", "handlers")


def _stmt_lists(olds: list[ast.stmt], news: list[ast.stmt]) -> Iterator[ChangeShape]:
    """Shapes of the differences between two statement lists (then, recursively, inside)."""
    sm = difflib.SequenceMatcher(None, [_key(s) for s in olds], [_key(s) for s in news], False)
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
    if _key(x) == _key(y):
        return
    yield from _negations(x, y)
    if isinstance(x, ast.If) and isinstance(y, ast.If) and _swapped(x, y):
        yield ChangeShape("negates_condition", f"swaps the if/else branches at line {y.lineno}")
        return
    if isinstance(x, ast.Return) and isinstance(y, ast.Return) and _now_constant(x, y):
        old, new = _text(x.value), _text(y.value)
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
        _key(x.test) == _key(y.test)
        and _key(x.body) == _key(y.orelse)
        and _key(x.orelse) == _key(y.body)
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
    old_keys = {_key(s) for top in a for s in ast.walk(top) if isinstance(s, ast.stmt)}
    old_text = "\n".join(_text(s, 10_000) for s in a)
    for top in b:
        for s in ast.walk(top):
            if not isinstance(s, ast.Try | ast.TryStar | ast.With | ast.AsyncWith):
                continue
            if _key(s) in old_keys:
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
                        f"wraps existing code at line {s.lineno} in {_text(sup[0])}",
                    )
    # an unconditional ``return <constant>`` in place of existing code, or cutting it short
    substantive = [s for s in a if not _inert(s)]
    for i, s in enumerate(b):
        if isinstance(s, ast.Return) and s.value is not None and _constant(s.value):
            if substantive:
                yield ChangeShape(
                    "returns_constant",
                    f"replaces the code at line {s.lineno} with return {_text(s.value)}",
                )
            elif followed or i < len(b) - 1:
                yield ChangeShape(
                    "returns_constant",
                    f"returns {_text(s.value)} at line {s.lineno}, before the code after it",
                )
            break


def _wraps(body: list[ast.stmt], old_keys: set[str], old_text: str) -> bool:
    """``body`` holds code the change took from its old place (exactly, or nearly so)."""
    if not old_keys:
        return False
    if any(_key(s) in old_keys for top in body for s in ast.walk(top) if isinstance(s, ast.stmt)):
        return True
    new_text = "\n".join(_text(s, 10_000) for s in body)
    # bounded: a quadratic match of two long texts would cost more than it tells
    return difflib.SequenceMatcher(None, old_text[:2000], new_text[:2000], False).ratio() >= 0.75


def _handlers_changed(x: ast.Try | ast.TryStar, y: ast.Try | ast.TryStar) -> Iterator[ChangeShape]:
    """An existing ``try`` whose handlers now discard what they did not discard before."""
    old_keys = {_key(h) for h in x.handlers}
    # the exceptions the old handlers already discarded: discarding them still is no change
    dropped = {_type_key(h) for h in x.handlers if _discards(h.body) is not None}
    for i, h in enumerate(y.handlers):
        if _key(h) in old_keys or _type_key(h) in dropped:
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
    return _key(h.type) if h.type is not None else ""


def _types(h: ast.ExceptHandler) -> str:
    return _text(h.type, 40) if h.type is not None else "(bare)"


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
            parts.append(f"returns {_text(s.value)}".rstrip() if s.value is not None else "returns")
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
                f"negates {where} at line {b.lineno}: {_text(a)} -> {_text(b)}",
            )


def _negated(a: ast.expr, b: ast.expr) -> bool:
    """One is ``not`` the other, as a whole."""
    return _is_not_of(b, a) or _is_not_of(a, b)


def _is_not_of(e: ast.expr, inner: ast.expr) -> bool:
    return (
        isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not) and _key(e.operand) == _key(inner)
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
        if _key(a) == _key(b):
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
