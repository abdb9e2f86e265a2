"""One file's repair ingredients: the code elsewhere in a repository that a fix may copy.

Redundancy-based repair (GenProg's "plastic surgery" hypothesis; see
:mod:`fixbugs.repair.ingredients`, which uses them) looks for a fix's code
among the repository's own calls, simple statements and returned
expressions, and for an attribute among those read on the same name.
Reading them needs every source file's tree: on sympy (896 files) that
was 34-38 s of every run's fix stage. They are facts of one file version,
like its symbols, so the index cuts them in its worker processes when a
repair first asks (not while it is built: most runs show a hypothesis long
before any repair) and keeps them in its cache beside the file's other rows
(:mod:`fixbugs.index.records`); ``scripts/ingredient-times`` measures both.

Each piece is the exact source text of its node, with the names it reads
and the import lines of its module that bind them (so a copy elsewhere can
bring its imports along). A statement keeps its tokens too, which the
search compares; pieces keep the order of :func:`ast.walk`.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from typing import Literal

from fixbugs.index.segments import Segments

__all__ = ["FileIngredients", "Ingredient", "IngredientKind", "code_tokens", "file_ingredients"]

IngredientKind = Literal["call", "Return", "Assign", "Expr", "returned"]
MAX_SEGMENT = 160  # longer code is no ingredient (a returned expression may be thrice that)
_STATEMENTS: dict[type[ast.AST], IngredientKind] = {
    ast.Return: "Return",
    ast.Assign: "Assign",
    ast.Expr: "Expr",
}


@dataclass(frozen=True, slots=True)
class Ingredient:
    """One piece: a one-line call (``key``: its callee's text), a one-line ``return``,
    assignment or expression statement (``tokens``: its tokens), or the one returned
    expression of a function (``key``: the function's name)."""

    path: str
    kind: IngredientKind
    key: str
    text: str
    names: frozenset[str]  # the names it reads
    imports: tuple[tuple[str, str], ...]  # (name, import line) it needs from its module
    tokens: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class FileIngredients:
    """A file's pieces, and the attributes read on each plain name (``os.path`` -> ``os``,
    ``path``), sorted."""

    path: str
    pieces: tuple[Ingredient, ...]
    attributes: tuple[tuple[str, str], ...]


def code_tokens(text: str) -> frozenset[str]:
    """The names, operators and strings of a piece of code (its words, if it does not
    tokenize)."""
    try:
        toks = tokenize.generate_tokens(io.StringIO(text).readline)
        return frozenset(
            t.string for t in toks if t.type in (tokenize.NAME, tokenize.OP, tokenize.STRING)
        )
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return frozenset(re.findall(r"\w+", text))


def _loads(node: ast.AST) -> frozenset[str]:
    return frozenset(
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    )


def _import_lines(tree: ast.Module, seg: Segments) -> dict[str, str]:
    """``name -> the one-line import that binds it`` at the module's top level."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom) and node.lineno == node.end_lineno:
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                if isinstance(node, ast.ImportFrom):
                    line = f"from {'.' * node.level}{node.module or ''} import {alias.name}"
                    if alias.asname:
                        line += f" as {alias.asname}"
                else:
                    line = seg.segment(node)
                out[name] = line
    return out


def file_ingredients(path: str, tree: ast.Module, text: str) -> FileIngredients:
    """The ingredients of one parsed file (``tree`` parsed from ``text``)."""
    seg = Segments(text)
    imports = _import_lines(tree, seg)
    pieces: list[Ingredient] = []
    attributes: set[tuple[str, str]] = set()

    def piece(kind: IngredientKind, key: str, node: ast.AST, text: str) -> Ingredient:
        names = _loads(node)
        needed = tuple((n, imports[n]) for n in sorted(names) if n in imports)
        tokens = code_tokens(text) if kind in _STATEMENTS.values() else frozenset()
        return Ingredient(path, kind, key, text, names, needed, tokens)

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            attributes.add((node.value.id, node.attr))
        elif isinstance(node, ast.Call) and node.lineno == node.end_lineno:
            text = seg.segment(node)
            if len(text) <= MAX_SEGMENT:
                pieces.append(piece("call", seg.segment(node.func), node, text))
        elif (kind := _STATEMENTS.get(type(node))) is not None and (
            node.lineno == node.end_lineno  # type: ignore[attr-defined]
        ):
            text = seg.segment(node)
            if len(text) <= MAX_SEGMENT and not isinstance(
                getattr(node, "value", None), ast.Constant
            ):
                pieces.append(piece(kind, "", node, text))
        elif isinstance(node, ast.FunctionDef):
            rets = [r for r in ast.walk(node) if isinstance(r, ast.Return) and r.value]
            if len(rets) == 1 and rets[0].value is not None:
                text = seg.segment(rets[0].value)
                if len(text) <= 3 * MAX_SEGMENT:
                    pieces.append(piece("returned", node.name, rets[0].value, text))
    return FileIngredients(path, tuple(pieces), tuple(sorted(attributes)))
