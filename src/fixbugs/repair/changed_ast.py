"""The statements a change touches, parsed cheaply, and the structure of ``ast`` nodes.

The shape checks (:mod:`fixbugs.repair.shapes`, :mod:`fixbugs.repair.demotions`)
compare the old and new ``ast`` of one file for every candidate that passed,
so what they share is made cheap here: :func:`changed_lists` parses only the
smallest old statement around a change (and its new counterpart), not the
whole file; :func:`node_key` gives a node's structure without positions,
kept on the node; :func:`parse_module` is cached per text, since every
candidate of a file is compared with the same old text. Pure: text in, nodes
out; nothing parsed here runs.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from agentrt import parse_python

__all__ = ["changed_lists", "node_key", "node_text", "parse_module", "text_lines"]


def text_lines(text: str) -> list[str]:
    """``text``'s lines, each with its newline (the last one without, when it has none)."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def changed_lists(
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
    t0, t1 = parse_module(old), parse_module(new)
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
    tree = parse_module(text)
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
    return parse_module("\n" * (start - 1) + "".join(part))


@functools.lru_cache(maxsize=64)
def parse_module(text: str) -> ast.Module | None:
    # cached: every candidate of a file is compared with the same old text
    try:
        return parse_python(text)
    except (SyntaxError, ValueError):
        return None


_KEY = "_fixbugs_shape_key"


def node_key(node: ast.AST | Sequence[ast.AST]) -> str:
    """Structure without positions: the same code at another indent has the same key.

    Kept on the node once computed and built from its children's keys: the
    walk compares a statement, then its body, then the statements in it, and
    an ``ast.dump`` at each level took 145 of 287 profiled seconds of youtube-dl-2's
    candidate generation (a 2,624-line ``common.py``).
    """
    if not isinstance(node, ast.AST):
        return "[" + ", ".join(node_key(n) for n in node) + "]"
    done = node.__dict__.get(_KEY)
    if done is not None:
        return done  # type: ignore[no-any-return]
    parts = [type(node).__name__]
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            parts.append(node_key(value))
        elif isinstance(value, list):
            parts.append(
                "["
                + ", ".join(node_key(v) if isinstance(v, ast.AST) else repr(v) for v in value)
                + "]"
            )
        else:
            parts.append(repr(value))
    key = "(" + " ".join(parts) + ")"
    setattr(node, _KEY, key)
    return key


def node_text(node: ast.AST | None, limit: int = 60) -> str:
    if node is None:
        return ""
    try:
        s = " ".join(ast.unparse(node).split())
    except (ValueError, TypeError, AttributeError, RecursionError):
        return "..."
    return s if len(s) <= limit else s[: limit - 3] + "..."
