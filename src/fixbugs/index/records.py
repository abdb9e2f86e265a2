"""The JSON form of :class:`~fixbugs.index.parse.FileFacts`: the cache's rows, the workers' answers.

Three rows per file: its module entry, its words, and its repair
ingredients (:mod:`fixbugs.index.ingredients`, written when a repair first
asks), each read only when needed.

Both are read back as untrusted data (a cache under the user's home can be
corrupt or written by another version; a worker's output is only bytes),
so every row is validated by pydantic before it becomes facts: a row that
does not validate is no row. Compact arrays, not objects: a large tree
has tens of thousands of symbols.
"""

from __future__ import annotations

import json
from typing import Literal as TypeLiteral

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from fixbugs.index.entries import ImportRef, Literal, ModuleEntry, Symbol
from fixbugs.index.ingredients import FileIngredients, Ingredient, IngredientKind
from fixbugs.index.parse import FileFacts, Words

__all__ = [
    "FORMAT",
    "facts_from_json",
    "facts_to_json",
    "ingredients_from_json",
    "ingredients_to_json",
    "words_from_json",
    "words_to_json",
]

FORMAT = 2  # bumped whenever what a row means changes: older rows are then misses

_SymbolRow = tuple[str, str, TypeLiteral["class", "function", "method"], int, int, list[str]]
_ImportRow = tuple[str, list[str], int, int]
_LiteralRow = tuple[str, int, bool]
_WordsRow = list[tuple[str, int]]


class _EntryRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    module: str
    symbols: list[_SymbolRow]
    imports: list[_ImportRow]
    literals: list[_LiteralRow]
    parse_error: str | None
    assigned: list[_SymbolRow]


class _FactsRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    format: int  # a row of another FORMAT is no row
    path: str
    entry: _EntryRow | None


class _WordsRowModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    words: _WordsRow | None
    symbols: list[_WordsRow]


# kind, key, text, names read, (name, import line) needed, tokens
_PieceRow = tuple[IngredientKind, str, str, list[str], list[tuple[str, str]], list[str]]


class _IngredientsRow(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    pieces: list[_PieceRow]
    attributes: list[tuple[str, str]]


_FACTS = TypeAdapter(_FactsRow)
_WORDS = TypeAdapter(_WordsRowModel)
_INGREDIENTS = TypeAdapter(_IngredientsRow | None)


def _sym_row(s: Symbol) -> list[object]:
    return [s.qualname, s.name, s.kind, s.start, s.end, list(s.bases)]


def facts_to_json(f: FileFacts) -> str:
    """The facts' module entry as one JSON row (the words go apart: :func:`words_to_json`)."""
    e = f.entry
    entry = None
    if e is not None:
        entry = {
            "module": e.module,
            "symbols": [_sym_row(s) for s in e.symbols],
            "imports": [[i.module, list(i.names), i.line, i.level] for i in e.imports],
            "literals": [[lit.text, lit.line, lit.docstring] for lit in e.literals],
            "parse_error": e.parse_error,
            "assigned": [_sym_row(s) for s in e.assigned],
        }
    return json.dumps({"format": FORMAT, "path": f.path, "entry": entry}, ensure_ascii=False)


def words_to_json(f: FileFacts) -> str:
    """The facts' BM25 documents (the file's, and one per symbol) as one JSON row."""
    words = None if f.words is None else [list(w) for w in f.words]
    symbols = [[list(w) for w in doc] for doc in f.symbol_words]
    return json.dumps({"words": words, "symbols": symbols}, ensure_ascii=False)


def _symbol(row: _SymbolRow, path: str) -> Symbol:
    qual, name, kind, start, end, bases = row
    return Symbol(qual, name, kind, path, start, end, tuple(bases))


def facts_from_json(raw: str | bytes, path: str) -> ModuleEntry | None:
    """The module entry of a row written for ``path``; ``ValueError`` if the row is no
    such row (invalid, another format, another path)."""
    try:
        row = _FACTS.validate_json(raw)
    except ValidationError as e:
        raise ValueError(f"invalid index row: {e.error_count()} error(s)") from e
    if row.format != FORMAT:
        raise ValueError(f"index row of format {row.format}, not {FORMAT}")
    if row.path != path:
        raise ValueError(f"index row of {row.path!r}, not of {path!r}")
    got = row.entry
    if got is None:
        return None
    return ModuleEntry(
        path,
        got.module,
        tuple(_symbol(s, path) for s in got.symbols),
        tuple(ImportRef(m, tuple(n), line, level) for m, n, line, level in got.imports),
        tuple(Literal(t, line, doc) for t, line, doc in got.literals),
        got.parse_error,
        tuple(_symbol(s, path) for s in got.assigned),
    )


def words_from_json(raw: str | bytes) -> tuple[Words | None, tuple[Words, ...]]:
    """The BM25 documents of a :func:`words_to_json` row; ``ValueError`` if invalid."""
    try:
        row = _WORDS.validate_json(raw)
    except ValidationError as e:
        raise ValueError(f"invalid index words: {e.error_count()} error(s)") from e
    words = None if row.words is None else tuple((w, c) for w, c in row.words)
    return words, tuple(tuple((w, c) for w, c in doc) for doc in row.symbols)


def ingredients_to_json(ing: FileIngredients | None) -> str:
    """A file's repair ingredients as one JSON row (``null``: the file does not parse)."""
    if ing is None:
        return "null"
    pieces = [
        [p.kind, p.key, p.text, sorted(p.names), [list(i) for i in p.imports], sorted(p.tokens)]
        for p in ing.pieces
    ]
    attributes = [list(a) for a in ing.attributes]
    return json.dumps({"pieces": pieces, "attributes": attributes}, ensure_ascii=False)


def ingredients_from_json(raw: str | bytes, path: str) -> FileIngredients | None:
    """The ingredients of a :func:`ingredients_to_json` row of ``path``; ``ValueError`` if
    the row is invalid."""
    try:
        row = _INGREDIENTS.validate_json(raw)
    except ValidationError as e:
        raise ValueError(f"invalid index ingredients: {e.error_count()} error(s)") from e
    if row is None:
        return None
    pieces = tuple(
        Ingredient(path, kind, key, text, frozenset(names), tuple(imports), frozenset(tokens))
        for kind, key, text, names, imports, tokens in row.pieces
    )
    return FileIngredients(path, pieces, tuple(row.attributes))
