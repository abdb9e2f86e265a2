"""One file's facts for the index: its AST's symbols, imports and literals, and its words.

When a repair asks, the same parser cuts the file's ingredients
(:mod:`fixbugs.index.ingredients`, :func:`text_ingredients`).

Pure and picklable, so :mod:`fixbugs.index.build` runs it in worker
processes: text in, :class:`FileFacts` out. The file is data: it is parsed
(``ast``), never compiled to run, imported or executed. A file that does not
parse (or nests too deep for the parser) is recorded with its
``parse_error`` and no symbols.

The walk visits nodes in :func:`ast.walk`'s order (breadth first), so the
first literal of a file holding a text is the one the signals always
took; it skips only leaves that hold nothing the index keeps (names,
operators, load/store contexts).

A string literal may decode to text that is no valid UTF-8: ``'\\udcff'``
written as an escape is a lone surrogate once parsed (pytest's own sources
hold one), and a row holding one cannot be stored (SQLite) nor sent as
JSON. Such a literal is kept in its escaped form (``backslashreplace``),
the same text in a fresh parse and in a row read back from the cache.
"""

from __future__ import annotations

import ast
import warnings
from bisect import bisect_left
from collections import Counter, deque
from dataclasses import dataclass
from itertools import pairwise

from agentrt import parse_python
from fixbugs.index.entries import ImportRef, Literal, ModuleEntry, Symbol, SymbolKind
from fixbugs.index.ingredients import FileIngredients, file_ingredients
from fixbugs.index.modules import absolute_import
from fixbugs.index.paths import is_source, is_test_path
from fixbugs.index.words import tokenize_code

__all__ = ["FileFacts", "Words", "file_facts", "parse_module", "text_ingredients"]

Words = tuple[tuple[str, int], ...]  # (word, count), sorted: a BM25 document
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_DOC_TYPES = frozenset({ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def _leaf_types() -> frozenset[type]:
    """Node classes with no def, import or string below them (names, operators,
    load/store contexts, import aliases): the walk does not visit them."""
    kinds = (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)
    return frozenset({ast.Name, ast.alias, *(c for k in kinds for c in k.__subclasses__())})


_BARREN_TYPES = _leaf_types()
_FIELDS: dict[type, tuple[str, ...]] = {}  # a node class's fields worth visiting


@dataclass(frozen=True, slots=True)
class FileFacts:
    """What the index keeps of one file: its module entry (``.py`` files), its words as a
    BM25 document (source files that are no tests), and one document per symbol."""

    path: str
    entry: ModuleEntry | None
    words: Words | None
    symbol_words: tuple[Words, ...] = ()


def _utf8_safe(text: str) -> str:
    """``text``, its lone surrogates (if any) written as ``\\udcff`` escapes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _bases(node: ast.ClassDef) -> tuple[str, ...]:
    out = []
    for b in node.bases:
        try:
            out.append(ast.unparse(b))
        except (ValueError, RecursionError):  # an AST unparse cannot render
            continue
    return tuple(out)


def _symbol(node: ast.AST, qual: str, kind: SymbolKind, path: str) -> Symbol:
    assert isinstance(node, _DEFS)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    bases = _bases(node) if isinstance(node, ast.ClassDef) else ()
    return Symbol(qual, node.name, kind, path, first, node.end_lineno or node.lineno, bases)


def _assigned(tree: ast.Module, path: str) -> tuple[Symbol, ...]:
    """Module-level ``Name = call(...)`` with a capitalized name (a factory-made class)."""
    out = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id[:1].isupper():
                    end = node.end_lineno or node.lineno
                    out.append(Symbol(t.id, t.id, "class", path, node.lineno, end))
    return tuple(out)


def _parse(text: str) -> ast.Module | str:
    """The file's tree, or why it has none."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the project's own SyntaxWarnings are not ours to print
        try:
            return parse_python(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            return f"{type(e).__name__}: {e}"[:300]


def text_ingredients(path: str, text: str) -> FileIngredients | None:
    """A file's repair ingredients (None if it does not parse): cut only when a run's
    repair asks, since most runs show their hypothesis before any repair."""
    tree = _parse(text)
    return None if isinstance(tree, str) else file_ingredients(path, tree, text)


def parse_module(path: str, module: str, is_package: bool, text: str) -> ModuleEntry:
    """The module entry of one ``.py`` file (``module`` its dotted name)."""
    tree = _parse(text)
    if isinstance(tree, str):
        return ModuleEntry(path, module, (), (), (), tree)
    symbols: list[Symbol] = []
    imports: list[ImportRef] = []
    literals: list[Literal] = []
    docs: set[int] = set()
    # (node, qualname prefix, kind of the innermost enclosing def)
    todo: deque[tuple[ast.AST, str, str]] = deque([(tree, "", "module")])
    pop, push = todo.popleft, todo.append
    while todo:
        node, prefix, scope = pop()
        t = type(node)
        if t is ast.Constant:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is str:
                text = value if value.isascii() else _utf8_safe(value)
                literals.append(Literal(text, node.lineno, id(node) in docs))  # type: ignore[attr-defined]
            continue
        if t in _DOC_TYPES:
            body = node.body  # type: ignore[attr-defined]
            if body and type(body[0]) is ast.Expr and type(body[0].value) is ast.Constant:
                docs.add(id(body[0].value))
            if t is not ast.Module:
                qual = prefix + node.name  # type: ignore[attr-defined]
                if t is ast.ClassDef:
                    kind: SymbolKind = "class"
                else:
                    kind = "method" if scope == "class" else "function"
                symbols.append(_symbol(node, qual, kind, path))
                prefix, scope = qual + ".", "class" if kind == "class" else "function"
        elif t is ast.Import:
            imports.extend(ImportRef(a.name, (), node.lineno) for a in node.names)  # type: ignore[attr-defined]
        elif t is ast.ImportFrom:
            assert isinstance(node, ast.ImportFrom)
            target = absolute_import(node.module, node.level, module, is_package)
            names = tuple(a.name for a in node.names)
            imports.append(ImportRef(target, names, node.lineno, node.level))
        fields = _FIELDS.get(t)
        if fields is None:
            fields = _FIELDS[t] = tuple(f for f in t._fields if f != "ctx")
        for field in fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for v in value:
                    if type(v) not in _BARREN_TYPES and isinstance(v, ast.AST):
                        push((v, prefix, scope))
            elif type(value) not in _BARREN_TYPES and isinstance(value, ast.AST):
                push((value, prefix, scope))
    return ModuleEntry(
        path, module, tuple(symbols), tuple(imports), tuple(literals), None, _assigned(tree, path)
    )


def _counted(words: Counter[str]) -> Words:
    return tuple(sorted(words.items()))


def _symbol_words(entry: ModuleEntry, lines: list[str]) -> tuple[Counter[str], tuple[Words, ...]]:
    """The file's words, and each symbol's lines as a document (a class's without the
    lines of its methods).

    The file is cut at every symbol's first and last line and each piece is
    tokenized once; a symbol's words are its pieces' words summed, the
    file's all of them.
    """
    cuts = sorted({1, len(lines) + 1} | {c for s in entry.symbols for c in (s.start, s.end + 1)})
    cuts = [c for c in cuts if 1 <= c <= len(lines) + 1]
    pieces = [
        (a, b, Counter(tokenize_code("\n".join(lines[a - 1 : b - 1])))) for a, b in pairwise(cuts)
    ]
    starts = [a for a, _, _ in pieces]
    out = []
    for s in entry.symbols:
        skip: list[tuple[int, int]] = []
        if s.kind == "class":
            depth = s.qualname.count(".") + 1
            skip = [
                (m.start, m.end)
                for m in entry.symbols
                if m.kind == "method"
                and m.qualname.startswith(s.qualname + ".")
                and m.qualname.count(".") == depth
            ]
        words: Counter[str] = Counter()
        for i in range(bisect_left(starts, s.start), len(pieces)):
            a, b, counted = pieces[i]
            if a > s.end:
                break
            if not any(lo <= a and b - 1 <= hi for lo, hi in skip):
                words.update(counted)
        out.append(_counted(words))
    total: Counter[str] = Counter()
    for _, _, counted in pieces:
        total.update(counted)
    return total, tuple(out)


def file_facts(path: str, module: str | None, is_package: bool, text: str) -> FileFacts:
    """Everything the index keeps of one file (``module`` None: not a Python module)."""
    entry = parse_module(path, module, is_package, text) if module is not None else None
    document = is_source(path) and not is_test_path(path)
    if not document:
        return FileFacts(path, entry, None)
    words = Counter(tokenize_code(path.replace("/", " ")))
    sym: tuple[Words, ...] = ()
    if entry is not None and entry.parse_error is None:
        in_file, sym = _symbol_words(entry, text.split("\n"))
        words.update(in_file)
    else:
        words.update(tokenize_code(text))
    return FileFacts(path, entry, _counted(words), sym)
