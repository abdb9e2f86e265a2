"""Expression-level fix templates (the TBar / PraPR families), over ``ast`` spans.

Each template takes the nodes of a suspicious region and yields
:class:`~fixbugs.repair.source.Edit` values; nothing here runs code. The
families: operator replacement, condition edits (negate, drop or add a
conjunct), same-kind name / attribute / call replacement in scope, call
argument edits, constant / slice / index ±1, returned-value changes, and
membership tests rewritten as prefix/suffix/word tests.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from agentrt import parse_python
from fixbugs.repair.ingredients import names_in_scope
from fixbugs.repair.source import Edit, SourceFile

__all__ = [
    "argument_edits",
    "condition_edits",
    "constant_edits",
    "membership_edits",
    "operator_edits",
    "return_edits",
]

_CMP_SWAPS: dict[type, tuple[str, ...]] = {
    ast.Lt: ("<=", ">", "!="),
    ast.LtE: ("<", ">="),
    ast.Gt: (">=", "<", "!="),
    ast.GtE: (">", "<="),
    ast.Eq: ("!=", "is"),
    ast.NotEq: ("==", "is not"),
    ast.Is: ("is not", "=="),
    ast.IsNot: ("is", "!="),
    ast.In: ("not in",),
    ast.NotIn: ("in",),
}
_BIN_SWAPS: dict[type, tuple[str, ...]] = {
    ast.Add: ("-",),
    ast.Sub: ("+",),
    ast.Mult: ("/", "+"),
    ast.Div: ("//", "*"),
    ast.FloorDiv: ("/", "%"),
    ast.Mod: ("//",),
    ast.BitAnd: ("|",),
    ast.BitOr: ("&",),
}
METHOD_SWAPS: dict[str, tuple[str, ...]] = {
    "startswith": ("endswith",),
    "endswith": ("startswith",),
    "lstrip": ("rstrip", "strip"),
    "rstrip": ("lstrip", "strip"),
    "strip": ("lstrip", "rstrip"),
    "append": ("extend", "insert"),
    "extend": ("append",),
    "find": ("rfind", "index"),
    "rfind": ("find",),
    "split": ("rsplit", "partition"),
    "rsplit": ("split",),
    "lower": ("upper",),
    "upper": ("lower",),
    "get": ("pop", "setdefault"),
    "keys": ("values", "items"),
    "values": ("keys", "items"),
    "items": ("keys", "values"),
    "min": ("max",),
    "max": ("min",),
    "any": ("all",),
    "all": ("any",),
    "sorted": ("reversed",),
    "match": ("search", "findall"),
    "search": ("match", "findall"),
}


def _gap_edit(
    src: SourceFile, left: ast.AST, right: ast.AST, old: str, new: str, why: str
) -> Edit | None:
    """Replace operator ``old`` in the text between two operands with ``new``."""
    a = src.span(left)
    b = src.span(right)
    if a is None or b is None:
        return None
    gap = src.text[a[1] : b[0]]
    # the operator token, not a character inside a comment or parenthesis run
    idx = gap.find(old)
    if idx < 0:
        return None
    line = getattr(left, "lineno", 1)
    end = getattr(right, "end_lineno", line) or line
    return src.replace_span((a[1] + idx, a[1] + idx + len(old)), line, end, new, "operator", why)


_CMP_TEXT = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}  # fmt: skip
_BIN_TEXT = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.BitAnd: "&", ast.BitOr: "|",
}  # fmt: skip


def operator_edits(src: SourceFile, nodes: list[ast.AST]) -> Iterator[Edit]:
    """Replace a comparison, arithmetic or boolean operator."""
    for node in nodes:
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                old = _CMP_TEXT[type(op)]
                for new in _CMP_SWAPS.get(type(op), ()):
                    e = _gap_edit(
                        src, operands[i], operands[i + 1], old, new, f"`{old}` -> `{new}`"
                    )
                    if e:
                        yield e
        elif isinstance(node, ast.BinOp) and type(node.op) in _BIN_SWAPS:
            old = _BIN_TEXT[type(node.op)]
            for new in _BIN_SWAPS[type(node.op)]:
                e = _gap_edit(src, node.left, node.right, old, new, f"`{old}` -> `{new}`")
                if e:
                    yield e
        elif isinstance(node, ast.BoolOp):
            old, new = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            for i in range(len(node.values) - 1):
                e = _gap_edit(
                    src, node.values[i], node.values[i + 1], old, new, f"`{old}` -> `{new}`"
                )
                if e:
                    yield e


def _conditions(nodes: list[ast.AST]) -> Iterator[ast.expr]:
    for node in nodes:
        if isinstance(node, ast.If | ast.While | ast.IfExp | ast.Assert):
            yield node.test
        elif isinstance(node, ast.Return) and isinstance(
            node.value, ast.BoolOp | ast.Compare | ast.UnaryOp
        ):
            yield node.value


def _reads(expr: str) -> set[str]:
    """The bare names an expression reads (its attributes' bases included)."""
    try:
        tree = parse_python(expr, mode="eval")
    except SyntaxError:
        return {"<unparsable>"}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def condition_edits(
    src: SourceFile, nodes: list[ast.AST], extra: list[str] | None = None
) -> Iterator[Edit]:
    """Negate a condition, drop one of its conjuncts/disjuncts, or add one.

    Negating a whole condition is marked high-risk: on a weak test suite it
    often "passes" by inverting the feature rather than fixing it. An added
    conjunct reads only names in scope there (one from another function's
    locals would only raise ``NameError``).
    """
    conds = list(_conditions(nodes))
    reads = {tail: _reads(tail) for tail in extra or ()}
    scopes: dict[int, set[str]] = {}  # one scope per enclosing function, not per condition
    for cond in conds:
        scope: set[str] = set()
        if reads:
            fn = src.enclosing(cond, (ast.FunctionDef, ast.AsyncFunctionDef))
            if id(fn) not in scopes:
                scopes[id(fn)] = names_in_scope(src, cond)
            scope = scopes[id(fn)]
        text = src.segment(cond)
        if isinstance(cond, ast.UnaryOp) and isinstance(cond.op, ast.Not):
            inner = src.segment(cond.operand)
            e = src.replace(cond, inner, "condition", "drop `not` of the condition", risk="high")
        else:
            e = src.replace(cond, f"not ({text})", "condition", "negate the condition", risk="high")
        if e:
            yield e
        for tail in extra or ():
            if tail in text or not reads[tail] <= scope:
                continue
            for glue, why in ((" and ", "add conjunct"), (" or ", "add disjunct")):
                e = src.replace(cond, f"{text}{glue}{tail}", "condition", f"{why} `{tail}`")
                if e:
                    yield e
    for node in nodes:
        if isinstance(node, ast.BoolOp) and len(node.values) >= 2:
            op = "and" if isinstance(node.op, ast.And) else "or"
            for i in range(len(node.values)):
                kept = node.values[:i] + node.values[i + 1 :]
                rep = f" {op} ".join(src.segment(v) for v in kept)
                e = src.replace(node, rep, "condition", f"drop operand {i + 1} of `{op}`")
                if e:
                    yield e
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and node not in conds:
            e = src.replace(node, src.segment(node.operand), "condition", "drop an inner `not`")
            if e:
                yield e


def argument_edits(src: SourceFile, nodes: list[ast.AST]) -> Iterator[Edit]:
    """Remove one call argument, or swap two positional arguments."""
    for node in nodes:
        if not isinstance(node, ast.Call):
            continue
        args = [a for a in node.args if not isinstance(a, ast.Starred)]
        if len(args) != len(node.args):
            continue
        for i, arg in enumerate(args):
            if len(args) + len(node.keywords) < 2 and i == 0:
                break
            sp_a = src.span(arg)
            if sp_a is None:
                continue
            nxt = args[i + 1] if i + 1 < len(args) else None
            if nxt is not None:
                sp_b = src.span(nxt)
                if sp_b is not None:
                    e = src.replace_span(
                        (sp_a[0], sp_b[0]), node.lineno, node.end_lineno or node.lineno, "",
                        "arguments", f"remove argument {i + 1} of `{src.segment(node.func)}`",
                    )  # fmt: skip
                    if e:
                        yield e
                    ta, tb = src.segment(arg), src.segment(nxt)
                    swapped = tb + src.text[sp_a[1] : sp_b[0]] + ta
                    e = src.replace_span(
                        (sp_a[0], sp_b[1]), node.lineno, node.end_lineno or node.lineno, swapped,
                        "arguments", f"swap arguments {i + 1} and {i + 2}",
                    )  # fmt: skip
                    if e:
                        yield e
            elif i > 0:
                prev = src.span(args[i - 1])
                if prev is not None:
                    e = src.replace_span(
                        (prev[1], sp_a[1]), node.lineno, node.end_lineno or node.lineno, "",
                        "arguments", f"remove argument {i + 1} of `{src.segment(node.func)}`",
                    )  # fmt: skip
                    if e:
                        yield e
        for kw in node.keywords:
            e = _drop_keyword(src, node, kw)
            if e:
                yield e


def _drop_keyword(src: SourceFile, call: ast.Call, kw: ast.keyword) -> Edit | None:
    sp = src.span(kw)
    if sp is None:
        return None
    a, b = sp
    before = src.text[:a].rstrip()
    if before.endswith(","):
        a = len(before) - 1
    return src.replace_span(
        (a, b), call.lineno, call.end_lineno or call.lineno, "", "arguments",
        f"drop keyword `{kw.arg}`",
    )  # fmt: skip


def constant_edits(src: SourceFile, nodes: list[ast.AST]) -> Iterator[Edit]:
    """Change an integer constant, slice bound or index by one; drop a slice bound."""
    for node in nodes:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, int)
            and not isinstance(node.value, bool)
        ):
            n = node.value
            for v in dict.fromkeys((n + 1, n - 1)):
                e = src.replace(node, str(v), "constant", f"`{n}` -> `{v}`")
                if e:
                    yield e
        elif isinstance(node, ast.Slice):
            for bound, label in ((node.lower, "lower"), (node.upper, "upper")):
                if bound is None:
                    continue
                sp = src.span(node)
                bsp = src.span(bound)
                if sp is None or bsp is None:
                    continue
                text = src.text[sp[0] : sp[1]]
                rel = (bsp[0] - sp[0], bsp[1] - sp[0])
                dropped = text[: rel[0]] + text[rel[1] :]
                e = src.replace(node, dropped, "constant", f"drop the slice's {label} bound")
                if e:
                    yield e


def return_edits(src: SourceFile, nodes: list[ast.AST]) -> Iterator[Edit]:
    """Change a returned value. Returning a constant is high-risk (it can game a test)."""
    for node in nodes:
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        value = node.value
        text = src.segment(value)
        if isinstance(value, ast.Call | ast.Name | ast.Attribute | ast.Subscript):
            for rep, why in (
                (f"list({text})", "return a list"),
                (f"bool({text})", "return a bool"),
            ):
                e = src.replace(value, rep, "return", why)
                if e:
                    yield e
        for const in ("None", "False", "True"):
            e = src.replace(value, const, "return", f"return `{const}`", risk="high")
            if e:
                yield e


def membership_edits(src: SourceFile, nodes: list[ast.AST]) -> Iterator[Edit]:
    """``a in s`` as a prefix, suffix or whole-word test (and the same for ``not in``)."""
    for node in nodes:
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        op = node.ops[0]
        if not isinstance(op, ast.In | ast.NotIn):
            continue
        needle, hay = src.segment(node.left), src.segment(node.comparators[0])
        neg = "not " if isinstance(op, ast.NotIn) else ""
        for form, why in (
            (f"{neg}{hay}.startswith({needle})", "membership -> prefix test"),
            (f"{neg}{hay}.endswith({needle})", "membership -> suffix test"),
            (f"{needle} {'not in' if neg else 'in'} {hay}.split()", "membership -> word test"),
        ):
            e = src.replace(node, form, "membership", why)
            if e:
                yield e
