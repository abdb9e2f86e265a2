"""Shapes of a passing change that keep it from being *validated* (issue 44, item 5).

:mod:`fixbugs.repair.shapes` finds changes that only hide the failure
(swallow it, negate a whole condition, return a constant). These are the
others that held-out bugs showed passing every test while wrong; each gives
one :class:`~fixbugs.repair.verdict.FailedCheck`:

- ``bare_except``: a new bare ``except:`` (it catches every error, exits too);
- ``special_case``: a new comparison with a literal of the failing test
  (``if x == 'the test's value'``), where the function now compares with it
  more often than before: the test's case, not the bug's;
- ``deletes_check``: an ``assert`` or a ``raise`` of the function gone;
- ``replaces_operand`` (:mod:`fixbugs.repair.conditions`, as the next): a condition's
  ``a.x`` now ``a.y``
  (``'push' in command.script_parts`` → ``'push' in command.output``: the
  rule now fires on any command whose output mentions push);
- ``changes_condition``: a condition given a new ``and``/``or`` part on
  something it did not test (``if disable:`` → ``if disable and mininterval
  is None:``, so ``disable=True`` no longer disables); a guard on what it
  already tests (``x is not None and x.y``) is not this; or matched against a
  shorter part of its text (``'php -s' in s`` → ``'-s' in s``: any php
  command with ``-s`` inside a word now matches), a shorter prefix or suffix;
  or a loop that used every item given a test of the item that skips some
  (``[f(s) for s in xs if s is not None]``, ``if v is None: continue``): the
  bad value is dropped where it is used, not mended where it is made;
- ``skips_effects``: a new ``return`` with effects of the function after it
  (assignments to attributes, subscripts or globals, calls): what the
  function still has to do is skipped.

Pure and ``ast``-based: the buggy and the patched text of one file in,
checks out; run on candidates that passed the tests only
(:func:`fixbugs.stages.lead.judge`), so a whole-file parse is affordable.
:func:`change_size` measures a change for the choice among passing
candidates: the smaller behavioural change leads.
"""

from __future__ import annotations

import ast
import difflib
from collections import Counter
from collections.abc import Iterator

from fixbugs.repair.changed_ast import node_key, node_text, parse_module
from fixbugs.repair.conditions import condition_checks, skipped_items
from fixbugs.repair.scopes import NESTED, Scope, scope_pairs
from fixbugs.repair.shapes import classify_change
from fixbugs.repair.verdict import FailedCheck, shape_check

__all__ = ["change_checks", "change_size", "scope_pairs"]

# numbers too common in code to make a comparison a special case
_PLAIN_NUMBERS = frozenset({0, 1, -1, 2})


def change_checks(
    old: str, new: str, literals: frozenset[str] = frozenset()
) -> tuple[FailedCheck, ...]:
    """The failed checks of rewriting one file's ``old`` text as ``new``.

    ``literals``: the failing tests' constants (strings as
    :func:`fixbugs.repair.hints.test_literals` gives them, numbers by
    ``repr``). A text that does not parse gives no check.
    """
    if old == new:
        return ()
    out: list[FailedCheck] = []
    shape = classify_change(old, new)
    if shape is not None:
        out.append(shape_check(shape))
    for a, b in scope_pairs(old, new):
        out += _bare_except(a, b, swallowed=shape is not None and shape.kind == "swallows")
        out += _special_case(a, b, literals)
        out += _deleted_checks(a, b)
        out += condition_checks(a, b)
        out += skipped_items(a, b)
        out += _early_returns(a, b)
    return tuple(dict.fromkeys(out))


def change_size(old: str, new: str) -> int:
    """How many AST nodes the change adds or removes, each node by its kind and own value.

    ``a.x`` → ``a.y`` is 2; a new ``and m is None`` part is 6. Unparsable
    text: its changed lines, as a fallback that still orders candidates.
    """
    pairs = scope_pairs(old, new)
    if not pairs and (parse_module(old) is None or parse_module(new) is None):
        sm = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), False)
        return sum(max(i2 - i1, j2 - j1) for t, i1, i2, j1, j2 in sm.get_opcodes() if t != "equal")
    total = 0
    for a, b in pairs:
        ca, cb = Counter(_labels(a.node)), Counter(_labels(b.node))
        total += sum((ca - cb).values()) + sum((cb - ca).values())
    return total


def _labels(node: ast.AST) -> Iterator[str]:
    """Each node of ``node``'s own code as its kind and its own scalar values."""
    for n in Scope("", node).own():
        own = [
            repr(v)
            for f in n._fields
            if not isinstance(v := getattr(n, f, None), ast.AST | list) and v is not None
        ]
        yield type(n).__name__ + "(" + ",".join(own) + ")"


def _count(nodes: Iterator[ast.AST]) -> Counter[str]:
    return Counter(node_key(n) for n in nodes)


# -- the checks -------------------------------------------------------------------


def _bare_except(a: Scope, b: Scope, *, swallowed: bool) -> Iterator[FailedCheck]:
    if swallowed:
        return  # the swallowing handler is already named
    old = _count(h for h in a.own() if isinstance(h, ast.ExceptHandler) and h.type is None)
    for h in b.own():
        if isinstance(h, ast.ExceptHandler) and h.type is None:
            k = node_key(h)
            if old[k] > 0:
                old[k] -= 1
                continue
            yield FailedCheck(
                "bare_except",
                f"at line {h.lineno} in {b.name}: it catches every error, "
                "KeyboardInterrupt and SystemExit included",
            )
            return


def _special_case(a: Scope, b: Scope, literals: frozenset[str]) -> Iterator[FailedCheck]:
    if not literals:
        return
    old = _count(n for n in a.own() if isinstance(n, ast.Compare))
    # a changed comparison that keeps its literal brings no test's case in: black-17's real
    # fix, `src_txt[-1] != "\n"` -> `src_txt[-1:] != "\n"`; so a literal counts only where
    # the function now compares with it more often than before
    before, after = _compared(a), _compared(b)
    for n in b.own():
        if not isinstance(n, ast.Compare) or old[node_key(n)] > 0:
            continue
        if not all(isinstance(op, ast.Eq | ast.NotEq | ast.Is | ast.IsNot) for op in n.ops):
            continue
        for side in (n.left, *n.comparators):
            lit = _literal(side)
            if lit is not None and lit in literals and after[lit] > before[lit]:
                yield FailedCheck(
                    "special_case",
                    f"compares with {node_text(side)}, a value of the failing test, "
                    f"at line {n.lineno} in {b.name}: {node_text(n)}",
                )
                return


def _compared(scope: Scope) -> Counter[str]:
    """How many times the scope compares with each literal."""
    return Counter(
        lit
        for n in scope.own()
        if isinstance(n, ast.Compare)
        for side in (n.left, *n.comparators)
        if (lit := _literal(side)) is not None
    )


def _literal(e: ast.expr) -> str | None:
    if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value:
        return e.value
    if (
        isinstance(e, ast.Constant)
        and isinstance(e.value, int | float)
        and not isinstance(e.value, bool)
        and e.value not in _PLAIN_NUMBERS
    ):
        return repr(e.value)
    return None


def _deleted_checks(a: Scope, b: Scope) -> Iterator[FailedCheck]:
    new = _count(n for n in b.own() if isinstance(n, ast.Assert | ast.Raise))
    for n in a.own():
        if not isinstance(n, ast.Assert | ast.Raise):
            continue
        k = node_key(n)
        if new[k] > 0:
            new[k] -= 1
            continue
        what = "assertion" if isinstance(n, ast.Assert) else "raise"
        yield FailedCheck(
            "deletes_check",
            f"removes the {what} `{node_text(n)}` (old line {n.lineno}) from {a.name}",
        )
        return


def _early_returns(a: Scope, b: Scope) -> Iterator[FailedCheck]:
    if not isinstance(b.node, ast.FunctionDef | ast.AsyncFunctionDef):
        return
    old_returns = _count(n for n in a.own() if isinstance(n, ast.Return))
    old_stmts = _count(n for n in a.own() if isinstance(n, ast.stmt))
    declared = {
        name for n in b.own() if isinstance(n, ast.Global | ast.Nonlocal) for name in n.names
    }
    local = _locals(b) - declared
    for path in _return_paths(b.node.body, []):
        ret = path[-1][0][path[-1][1]]
        assert isinstance(ret, ast.Return)
        k = node_key(ret)
        if old_returns[k] > 0:
            old_returns[k] -= 1
            continue
        for after in _after(path):
            if old_stmts[node_key(after)] > 0 and _has_effect(after, declared, local):
                yield FailedCheck(
                    "skips_effects",
                    f"returns at line {ret.lineno} in {b.name} before `{node_text(after)}` "
                    f"(line {after.lineno}), which the function did after it",
                )
                return


Path = list[tuple[list[ast.stmt], int]]  # (a statement list, the index in it) from the body down


def _return_paths(body: list[ast.stmt], up: Path) -> Iterator[Path]:
    for i, s in enumerate(body):
        here = [*up, (body, i)]
        if isinstance(s, ast.Return):
            yield here
        elif not isinstance(s, NESTED):
            for f in ("body", "orelse", "finalbody"):
                inner = getattr(s, f, None)
                if isinstance(inner, list):
                    yield from _return_paths(inner, here)
            for h in getattr(s, "handlers", None) or []:
                yield from _return_paths(h.body, here)


def _after(path: Path) -> Iterator[ast.stmt]:
    """The statements that would run after the return, had it not returned: each enclosing
    block's later statements, innermost first (a sibling branch is not among them)."""
    for body, i in reversed(path):
        for s in body[i + 1 :]:
            yield s
            for n in ast.walk(s):
                if isinstance(n, ast.stmt) and n is not s and not isinstance(n, NESTED):
                    yield n


def _has_effect(s: ast.stmt, declared: set[str], local: set[str]) -> bool:
    """An effect that outlives the call: an assignment to an attribute or item of what the
    function did not make itself (``self``, a parameter, a global), to a global, a ``del``
    of such, or a call made for its effect that is not a method of one of its own locals.

    Work on the function's own locals (``buf.seek(0)``, ``parts[0] = x``) is not: an early
    return that skips it only skips computing what it returns. On the real fixes of dev,
    dev-wide and the pool's first 77 cases (113 in all), counting every call and item
    assignment flagged 7 (an early return for an edge case, then local work); this, none.
    """
    if isinstance(s, ast.Expr):
        value = s.value.value if isinstance(s.value, ast.Await) else s.value
        if not isinstance(value, ast.Call):
            return isinstance(s.value, ast.Await)
        return not (isinstance(value.func, ast.Attribute) and _base_name(value.func) in local)
    targets: list[ast.expr] = []
    if isinstance(s, ast.Delete | ast.Assign):
        targets = s.targets
    elif isinstance(s, ast.AugAssign | ast.AnnAssign):
        targets = [s.target]
    for t in targets:
        for n in ast.walk(t):
            if isinstance(n, ast.Attribute | ast.Subscript) and _base_name(n) not in local:
                return True
            if isinstance(n, ast.Name) and n.id in declared:
                return True
    return False


def _base_name(node: ast.expr) -> str | None:
    """The name an attribute or item chain starts from (``a`` of ``a.b[c].d``), if a name."""
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _locals(scope: Scope) -> set[str]:
    """The names a function binds itself (assignments, loops, ``with``), not its parameters."""
    out: set[str] = set()
    for n in scope.own():
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
    if isinstance(scope.node, ast.FunctionDef | ast.AsyncFunctionDef):
        a = scope.node.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]
        out -= {p.arg for p in params if p is not None}
    return out
