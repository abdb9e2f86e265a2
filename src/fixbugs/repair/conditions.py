"""Conditions rewritten in place: the checks of :mod:`fixbugs.repair.demotions` on them.

A passing change to a condition is wrong when it tests something else or
more or less than the bug needs (issue 44, item 5). :func:`condition_checks`
pairs a scope's old and new conditions (the tests of ``if``/``while``/
``assert``/conditional expressions and comprehension filters, and a returned
predicate) and gives ``replaces_operand`` for ``a.x`` now ``a.y``, and
``changes_condition`` for a new ``and``/``or`` part on something the
condition did not test, or a text matched against a shorter part of its
pattern (``'php -s' in s`` to ``'-s' in s``). :func:`skipped_items` gives
``changes_condition`` for a loop that used every item and now skips some by
a test of the item alone (``if s is not None`` in a comprehension, ``if v is
None: continue``). Measured against real fixes with ``scripts/gold-demotions``.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterator

from fixbugs.repair.changed_ast import node_key, node_text
from fixbugs.repair.scopes import Scope
from fixbugs.repair.verdict import FailedCheck

__all__ = ["condition_checks", "skipped_items"]


# a condition: the test of these statements and expressions, and a returned predicate
_TESTED = (ast.If, ast.While, ast.IfExp, ast.Assert)


def _is_condition(e: ast.expr) -> bool:
    """A returned comparison, ``and``/``or``, ``not`` or affix test: a predicate's condition."""
    return (
        isinstance(e, ast.Compare | ast.BoolOp)
        or (isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not))
        or (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Attribute)
            and e.func.attr in _AFFIXES
        )
    )


def _tests(s: Scope) -> list[ast.expr]:
    out: list[ast.expr] = []
    for n in s.own():
        if isinstance(n, _TESTED):
            out.append(n.test)
        elif isinstance(n, ast.Return) and n.value is not None and _is_condition(n.value):
            out.append(n.value)
        elif isinstance(n, ast.comprehension):
            out.extend(n.ifs)
    return sorted(out, key=lambda e: (e.lineno, e.col_offset))


def condition_checks(a: Scope, b: Scope) -> Iterator[FailedCheck]:
    """Conditions rewritten in place: an operand swapped, a shorter text to match, or a part
    added on something new."""
    olds, news = _tests(a), _tests(b)
    sm = difflib.SequenceMatcher(
        None, [node_key(x) for x in olds], [node_key(y) for y in news], False
    )
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "replace" or i2 - i1 != j2 - j1:
            continue
        for x, y in zip(olds[i1:i2], news[j1:j2], strict=True):
            swap = _attr_swap(x, y)
            if swap is not None:
                yield FailedCheck(
                    "replaces_operand",
                    f"the condition at line {y.lineno} in {b.name} now tests "
                    f"`{node_text(swap[1])}` where it tested `{node_text(swap[0])}`",
                )
                continue
            short = _shortened_pattern(x, y)
            if short is not None:
                was, now, wider = short
                yield FailedCheck(
                    "changes_condition",
                    f"`{was}` is now `{now}`, a shorter text to match, at line {y.lineno} "
                    f"in {b.name}: the condition now holds for "
                    f"{'more' if wider else 'fewer'} texts",
                )
                continue
            extra = _new_part(x, y)
            if extra is not None:
                op, part = extra
                if op == "and":
                    why = f"narrows `{node_text(x)}` with `and {node_text(part)}`"
                    what = f"no longer runs whenever `{node_text(x)}` holds"
                else:
                    why = f"widens `{node_text(x)}` with `or {node_text(part)}`"
                    what = f"now also runs when `{node_text(part)}` holds"
                yield FailedCheck(
                    "changes_condition", f"{why} at line {y.lineno} in {b.name}: its branch {what}"
                )


def skipped_items(a: Scope, b: Scope) -> Iterator[FailedCheck]:
    """A loop over the same items that now skips some by a test of the item alone: a new
    comprehension filter (``for s in xs if s is not None``) or a new ``if ...: continue``
    first in a ``for`` body. The failing value is dropped, not fixed where it is made."""
    filtered: dict[str, bool] = {}  # each old loop's items: whether a test chose among them
    for n in a.own():
        if isinstance(n, _LOOPS):
            key = _loop_key(n)
            filtered[key] = filtered.get(key, False) or bool(_item_tests(n))
    for n in b.own():
        # only a loop that used every item before: a changed filter is another check's
        if not isinstance(n, _LOOPS) or filtered.get(_loop_key(n), True):
            continue
        items = _chains(n.target)
        for t, skips in _item_tests(n):
            mine = _chains(t)
            if not mine:
                continue
            if all(any(_related(c, i) for i in items) for c in mine):
                which = "skips the items where" if skips else "keeps only the items where"
                yield FailedCheck(
                    "changes_condition",
                    f"the loop over `{node_text(n.iter)}` at line {t.lineno} in {b.name} now "
                    f"{which} `{node_text(t)}` holds, where it used every one: a bad value "
                    "is dropped, not mended where it is made",
                )
                return


# loops whose items a new test of the item can skip
_LOOPS = (ast.comprehension, ast.For, ast.AsyncFor)


def _loop_key(n: ast.comprehension | ast.For | ast.AsyncFor) -> str:
    """A loop's items, the same in the old and the new code: its target and iterable."""
    return node_key(n.target) + " in " + node_key(n.iter)


def _item_tests(n: ast.comprehension | ast.For | ast.AsyncFor) -> list[tuple[ast.expr, bool]]:
    """What decides whether an item is used, and whether the test skips it: a
    comprehension's filters (keep), a ``for`` body's first ``if ...: continue`` (skip)."""
    if isinstance(n, ast.comprehension):
        return [(t, False) for t in n.ifs]
    first = n.body[0] if n.body else None
    if (
        isinstance(first, ast.If)
        and not first.orelse
        and len(first.body) == 1
        and isinstance(first.body[0], ast.Continue)
    ):
        return [(first.test, True)]
    return []


def _aligned(x: object, y: object) -> Iterator[tuple[ast.AST, ast.AST]]:
    """The nodes of ``x`` and ``y`` that differ at the same place, of the same kind, outermost
    first: where one condition was rewritten into the other."""
    if isinstance(x, ast.AST) and isinstance(y, ast.AST):
        if type(x) is not type(y) or node_key(x) == node_key(y):
            return
        yield x, y
        for f in x._fields:
            yield from _aligned(getattr(x, f, None), getattr(y, f, None))
    elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for ex, ey in zip(x, y, strict=True):
            yield from _aligned(ex, ey)


def _attr_swap(x: ast.expr, y: ast.expr) -> tuple[ast.Attribute, ast.Attribute] | None:
    """``a.p`` in ``x`` at the place where ``y`` has ``a.q`` (the same ``a``)."""
    for p, q in _aligned(x, y):
        if (
            isinstance(p, ast.Attribute)
            and isinstance(q, ast.Attribute)
            and p.attr != q.attr
            and node_key(p.value) == node_key(q.value)
        ):
            return p, q
    return None


# a text matched against a pattern: the pattern's place, and when a shorter one matches more
_AFFIXES = {"startswith": str.startswith, "endswith": str.endswith}


def _shortened_pattern(x: ast.expr, y: ast.expr) -> tuple[str, str, bool] | None:
    """(the old match, the new, whether more texts pass) where ``y`` matches a text against
    a part of the pattern ``x`` matched it against at the same place: ``'php -s' in s`` to
    ``'-s' in s``, ``s.startswith('ab')`` to ``s.startswith('a')``."""
    for p, q in _aligned(x, y):
        if (
            isinstance(p, ast.Compare)
            and isinstance(q, ast.Compare)
            and len(p.ops) == len(q.ops) == 1
            and type(p.ops[0]) is type(q.ops[0])
            and isinstance(p.ops[0], ast.In | ast.NotIn)
            and node_key(p.comparators[0]) == node_key(q.comparators[0])
        ):
            was, now = _text(p.left), _text(q.left)
            if was is not None and now is not None and now != was and now in was:
                return node_text(p), node_text(q), isinstance(p.ops[0], ast.In)
        if (
            isinstance(p, ast.Call)
            and isinstance(q, ast.Call)
            and isinstance(p.func, ast.Attribute)
            and p.func.attr in _AFFIXES
            and node_key(p.func) == node_key(q.func)
            and len(p.args) == len(q.args) == 1
        ):
            was, now = _text(p.args[0]), _text(q.args[0])
            affix = _AFFIXES[p.func.attr]
            if was is not None and now is not None and now != was and affix(was, now):
                return node_text(p), node_text(q), True
    return None


def _text(e: ast.expr) -> str | None:
    return e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else None


def _new_part(x: ast.expr, y: ast.expr) -> tuple[str, ast.expr] | None:
    """(``and``/``or``, the part) when ``y`` is ``x`` with a part on something ``x`` does
    not test; a part on what ``x`` tests (a guard, ``x is not None and x.y``) is None."""
    if not isinstance(y, ast.BoolOp):
        return None
    had = (
        [node_key(v) for v in x.values]
        if isinstance(x, ast.BoolOp) and type(x.op) is type(y.op)
        else [node_key(x)]
    )
    keys = [node_key(v) for v in y.values]
    if not all(k in keys for k in had):
        return None
    added = [v for v in y.values if node_key(v) not in had]
    if not added:
        return None
    tested = {c for part in (x.values if isinstance(x, ast.BoolOp) else [x]) for c in _chains(part)}
    for part in added:
        mine = _chains(part)
        if mine and not any(_related(c, t) for c in mine for t in tested):
            return ("and" if isinstance(y.op, ast.And) else "or"), part
    return None


def _chains(e: ast.expr) -> set[str]:
    """The dotted names ``e`` reads (``self.a.b``, ``x``), the longest of each."""
    out: set[str] = set()
    inner: set[int] = set()
    for n in ast.walk(e):
        if isinstance(n, ast.Attribute | ast.Name) and id(n) not in inner:
            text = _dotted(n)
            if text is not None:
                out.add(text)
                inner.update(id(m) for m in ast.walk(n))
    return out


def _dotted(n: ast.expr) -> str | None:
    if isinstance(n, ast.Name):
        return n.id
    if isinstance(n, ast.Attribute):
        base = _dotted(n.value)
        return None if base is None else f"{base}.{n.attr}"
    return None


def _related(a: str, b: str) -> bool:
    """One dotted name is the other or holds it (``x`` and ``x.y``)."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")
