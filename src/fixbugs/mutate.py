"""Candidate edits by program mutation: small, local, generic repair operators.

Automated program repair has long found real one-token fixes by trying
operator mutations at the most suspicious lines and keeping only those the
tests confirm (GenProg, PraPR, TBar). The operators here are generic Python
ones — comparison, boolean, arithmetic, constant and slice mutations — and
apply to tokens, never inside strings or comments. Each candidate changes
exactly one line, so it is minimal by construction; validation decides.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["LineEdit", "TextEdit", "ast_mutations", "mutations_for_line", "mutations_in_region"]

# operator swaps, both ways where both are plausible slips
_OP_SWAPS: dict[str, tuple[str, ...]] = {
    "<": ("<=", ">"),
    "<=": ("<", ">="),
    ">": (">=", "<"),
    ">=": (">", "<="),
    "==": ("!=",),
    "!=": ("==",),
    "+": ("-",),
    "-": ("+",),
    "*": ("/",),
    "//": ("/",),
    "/": ("//",),
    "+=": ("-=",),
    "-=": ("+=",),
}
_NAME_SWAPS: dict[str, tuple[str, ...]] = {
    "and": ("or",),
    "or": ("and",),
    "True": ("False",),
    "False": ("True",),
    "is": ("is not",),
    "in": ("not in",),
    "startswith": ("endswith",),
    "endswith": ("startswith",),
    "min": ("max",),
    "max": ("min",),
    "any": ("all",),
    "all": ("any",),
    "lstrip": ("rstrip", "strip"),
    "rstrip": ("lstrip", "strip"),
    "append": ("extend",),
    "extend": ("append",),
    "break": ("continue",),
    "continue": ("break",),
}
_NEGATABLE = ("if ", "elif ", "while ", "return ", "assert ")


@dataclass(frozen=True, slots=True)
class LineEdit:
    """Replace line ``line`` (1-based) of ``path`` with ``new``; ``why`` says how."""

    path: str
    line: int
    old: str
    new: str
    why: str


def _tokens(line: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []


def mutations_for_line(path: str, lineno: int, line: str) -> Iterator[LineEdit]:
    """Every single-token mutation of one source line (strings and comments untouched)."""
    stripped = line.strip()
    if not stripped or stripped.startswith(("#", "def ", "class ", "import ", "from ", "@")):
        return
    indent = line[: len(line) - len(line.lstrip())]
    body = line.strip("\n").lstrip()
    eol = "\n" if line.endswith("\n") else ""
    seen: set[str] = set()

    def emit(new_body: str, why: str) -> Iterator[LineEdit]:
        new = indent + new_body + eol
        if new != line and new not in seen:
            seen.add(new)
            yield LineEdit(path, lineno, line, new, why)

    for tok in _tokens(body):
        if tok.start[0] != 1:
            continue
        a, b = tok.start[1], tok.end[1]
        if tok.type == tokenize.OP and tok.string in _OP_SWAPS:
            for rep in _OP_SWAPS[tok.string]:
                yield from emit(body[:a] + rep + body[b:], f"`{tok.string}` -> `{rep}`")
        elif tok.type == tokenize.NAME and tok.string in _NAME_SWAPS:
            for rep in _NAME_SWAPS[tok.string]:
                yield from emit(body[:a] + rep + body[b:], f"`{tok.string}` -> `{rep}`")
        elif tok.type == tokenize.NUMBER and tok.string.isdigit():
            n = int(tok.string)
            for rep in {str(n + 1), str(max(0, n - 1))}:
                yield from emit(body[:a] + rep + body[b:], f"`{n}` -> `{rep}`")
    for kw in _NEGATABLE:
        if not body.startswith(kw):
            continue
        rest = body[len(kw) :].rstrip()
        colon = rest.endswith(":")
        if kw in {"if ", "elif ", "while "} and not colon:
            continue  # a one-line compound statement or a comment after the colon
        inner = rest[:-1] if colon else rest
        if not inner:
            continue
        tail = ":" if colon else ""
        if inner.startswith("not "):
            yield from emit(kw + inner[4:] + tail, f"drop `not` after `{kw.strip()}`")
        else:
            yield from emit(
                kw + "not (" + inner + ")" + tail, f"negate the `{kw.strip()}` condition"
            )


def mutations_in_region(
    path: str, text: str, ranges: tuple[tuple[int, int], ...], *, limit: int = 200
) -> list[LineEdit]:
    """Mutations of the lines in ``ranges`` (1-based, inclusive), in range order."""
    lines = text.splitlines(keepends=True)
    out: list[LineEdit] = []
    seen_lines: set[int] = set()
    for start, end in ranges:
        for n in range(max(1, start), min(len(lines), end) + 1):
            if n in seen_lines:
                continue
            seen_lines.add(n)
            out.extend(mutations_for_line(path, n, lines[n - 1]))
            if len(out) >= limit:
                return out[:limit]
    return out


@dataclass(frozen=True, slots=True)
class TextEdit:
    """A whole-file rewrite confined to lines ``start``..``end`` of ``path``."""

    path: str
    start: int
    end: int
    new_text: str
    why: str


def _segment_edit(
    path: str, text: str, node: ast.expr, replacement: str, why: str
) -> TextEdit | None:
    """Replace the exact source of ``node`` with ``replacement``."""
    if node.end_lineno is None:
        return None
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    a = starts[node.lineno - 1] + _char_offset(lines[node.lineno - 1], node.col_offset)
    end_line = node.end_lineno or node.lineno
    b = starts[end_line - 1] + _char_offset(lines[end_line - 1], node.end_col_offset or 0)
    new = text[:a] + replacement + text[b:]
    try:
        ast.parse(new)
    except SyntaxError:
        return None
    return TextEdit(path, node.lineno, end_line, new, why)


def _char_offset(line: str, byte_col: int) -> int:
    """ast columns are UTF-8 byte offsets; convert to a character offset."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def ast_mutations(
    path: str, text: str, ranges: tuple[tuple[int, int], ...], *, limit: int = 60
) -> list[TextEdit]:
    """Expression-level repairs inside ``ranges``: drop one operand of ``and``/``or``,
    drop a ``not``, delete one simple statement. Every result still parses."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []

    def inside(node: ast.AST) -> bool:
        lo = getattr(node, "lineno", 0)
        hi = getattr(node, "end_lineno", lo) or lo
        return any(a <= lo and hi <= b for a, b in ranges)

    out: list[TextEdit] = []
    for node in ast.walk(tree):
        if not inside(node):
            continue
        if isinstance(node, ast.BoolOp) and len(node.values) >= 2:
            op = "and" if isinstance(node.op, ast.And) else "or"
            for i in range(len(node.values)):
                kept = node.values[:i] + node.values[i + 1 :]
                # keep the operands' own source text (quotes, line breaks)
                parts = [ast.get_source_segment(text, v) or ast.unparse(v) for v in kept]
                rep = f" {op} ".join(parts)
                e = _segment_edit(path, text, node, rep, f"drop operand {i + 1} of `{op}`")
                if e:
                    out.append(e)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            operand = ast.get_source_segment(text, node.operand) or ast.unparse(node.operand)
            e = _segment_edit(path, text, node, operand, "drop `not`")
            if e:
                out.append(e)
        elif isinstance(node, ast.Assign | ast.Expr | ast.AugAssign) and node.lineno == (
            node.end_lineno or node.lineno
        ):
            lines = text.splitlines(keepends=True)
            new = "".join(lines[: node.lineno - 1] + lines[node.lineno :])
            try:
                ast.parse(new)
            except SyntaxError:
                continue
            out.append(
                TextEdit(
                    path,
                    node.lineno,
                    node.lineno,
                    new,
                    f"delete the statement on line {node.lineno}",
                )
            )
        if len(out) >= limit:
            break
    return out
