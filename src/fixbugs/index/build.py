"""Building a :class:`~fixbugs.index.repo_index.RepoIndex`: read, key, reuse, parse, save.

The tree is read through :class:`~fixbugs.inputs.repo.Repository` (the one
walk and the one way to read a file: no link followed, no FIFO opened).
Every file gets a content key; the tree's key is theirs combined. A tree in
the cache is read back whole; otherwise the rows of unchanged files are
reused and only the changed ones are parsed, across the cores in worker
processes (``python -m fixbugs.index.worker``: a fresh interpreter that
imports only the parser, so it starts fast and inherits nothing of this
process), and the new index is saved for the next run.

A file's repair ingredients (:mod:`fixbugs.index.ingredients`) are cut
only when a repair first asks for them (most runs show a hypothesis long
before any repair, and a cold index of a large tree would take half as long
again), the same way: cache rows first, the rest in workers, then saved.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fixbugs.index.cache import IndexCache, file_key, tree_key
from fixbugs.index.entries import ModuleEntry, Symbol
from fixbugs.index.ingredients import FileIngredients
from fixbugs.index.modules import module_names
from fixbugs.index.parse import FileFacts, Words, file_facts, text_ingredients
from fixbugs.index.paths import is_source, is_test_path
from fixbugs.index.records import (
    facts_from_json,
    facts_to_json,
    ingredients_from_json,
    ingredients_to_json,
    words_from_json,
    words_to_json,
)
from fixbugs.index.repo_index import RepoIndex
from fixbugs.index.search import Bm25Table
from fixbugs.index.spread import spread, worker_rows

if TYPE_CHECKING:
    from fixbugs.inputs.repo import Repository

__all__ = ["as_index", "build_index", "index_repository", "index_texts"]


def _is_package(path: str) -> bool:
    return path == "__init__.py" or path.endswith("/__init__.py")


def _documents(paths: Sequence[str]) -> list[str]:
    """The files BM25 ranks: source that is not a test (sorted, as the index lists them)."""
    return [p for p in paths if is_source(p) and not is_test_path(p)]


_Item = tuple[str, str | None, bool, str]  # (path, module, is_package, text)
_Parsed = tuple[FileFacts, tuple[str, str] | None]  # facts, and their rows when a worker wrote them
_Cut = tuple[
    FileIngredients | None, str | None
]  # ingredients, and their row when a worker wrote it


def _parse_in_worker(batch: list[_Item]) -> list[_Parsed] | None:
    """Facts of ``batch`` from one worker process, with its rows; None if it failed."""
    answered = worker_rows((), batch, 2)
    if answered is None:
        return None
    out: list[_Parsed] = []
    try:
        for (path, _, _, _), (facts, words_row) in zip(batch, answered, strict=True):
            entry = facts_from_json(facts, path)  # validated like a cache row
            words, symbol_words = words_from_json(words_row)
            out.append((FileFacts(path, entry, words, symbol_words), (facts, words_row)))
    except ValueError:
        return None
    return out


def _parse_all(items: Sequence[_Item], workers: int, notes: list[str]) -> list[_Parsed]:
    """Facts of every item, in order: in worker processes when there are many."""
    return spread(
        items,
        size=lambda item: len(item[3]),
        workers=workers,
        in_worker=_parse_in_worker,
        here=lambda item: (file_facts(*item), None),
        notes=notes,
    )


def _cut_in_worker(batch: list[tuple[str, str]]) -> list[_Cut] | None:
    """Ingredients of ``batch`` from one worker process, with their rows."""
    answered = worker_rows(("ingredients",), batch, 1)
    if answered is None:
        return None
    try:
        return [
            (ingredients_from_json(row, p), row)
            for (p, _), (row,) in zip(batch, answered, strict=True)
        ]
    except ValueError:
        return None


def _ingredients_reader(
    cache: IndexCache | None, keys: Mapping[str, str], texts: Mapping[str, str], workers: int
) -> Callable[[Sequence[str]], dict[str, FileIngredients]]:
    """What gives a repair the ingredients of the files it asks for: the cache's rows, and
    the rest cut (in worker processes when there are many) and saved for the next run."""

    def read(paths: Sequence[str]) -> dict[str, FileIngredients]:
        out: dict[str, FileIngredients] = {}
        rows = cache.ingredient_rows([keys[p] for p in paths]) if cache is not None else {}
        missing = []
        for p in paths:
            try:
                got = ingredients_from_json(rows[keys[p]], p)
            except (KeyError, ValueError):  # not cut yet, or a row not to trust
                missing.append(p)
                continue
            if got is not None:
                out[p] = got
        cut = spread(
            [(p, texts[p]) for p in missing],
            size=lambda item: len(item[1]),
            workers=workers,
            in_worker=_cut_in_worker,
            here=lambda item: (text_ingredients(*item), None),
            notes=[],
        )
        new = []
        for p, (got, row) in zip(missing, cut, strict=True):
            if got is not None:
                out[p] = got
            new.append((keys[p], row if row is not None else ingredients_to_json(got)))
        if cache is not None and new:
            cache.store_ingredients(new)
        return out

    return read


def _assemble(
    texts: Mapping[str, str],
    modules: Mapping[str, str],
    entries: Mapping[str, ModuleEntry],
    tables: Callable[[list[str], list[Symbol]], tuple[Bm25Table, Bm25Table]],
    **meta: object,
) -> RepoIndex:
    docs = _documents(sorted(texts))
    symbol_docs = [s for p in docs if (e := entries.get(p)) is not None for s in e.symbols]
    file_table, symbol_table = tables(docs, symbol_docs)
    return RepoIndex(
        texts=texts,
        entries=entries,
        modules=modules,
        file_table=file_table,
        file_docs=docs,
        symbol_table=symbol_table,
        symbol_docs=symbol_docs,
        **meta,  # type: ignore[arg-type]
    )


def _from_cache(
    cache: IndexCache,
    key: str,
    texts: Mapping[str, str],
    modules: Mapping[str, str],
    keys: Mapping[str, str],
    root: Path | None,
    workers: int,
) -> RepoIndex | None:
    """The whole index of a tree the cache holds, or None (a miss, or a row that failed)."""
    tree = cache.tree(key)
    if tree is None or dict(tree.listing) != dict(keys):
        return None
    rows = cache.rows(list(keys.values()), words=False)
    entries: dict[str, ModuleEntry] = {}
    try:
        for path, k in keys.items():
            if k not in rows:
                return None
            entry = facts_from_json(rows[k][0], path)
            if entry is not None:
                entries[path] = entry

        def load(docs: list[str], symbols: list[Symbol]) -> tuple[Bm25Table, Bm25Table]:
            return (
                Bm25Table.load(tree.tables / "files", len(docs)),
                Bm25Table.load(tree.tables / "symbols", len(symbols)),
            )

        return _assemble(
            texts,
            modules,
            entries,
            load,
            tree_key=key,
            root=root,
            notes=tuple(cache.notes),
            cache_hit=True,
            ingredients=_ingredients_reader(cache, keys, texts, workers),
        )
    except ValueError as e:
        cache.notes.append(f"index cache: tree {key[:12]} unusable ({e}); rebuilt")
        return None


def index_texts(
    texts: Mapping[str, str],
    *,
    root: Path | None = None,
    cache: IndexCache | None = None,
    workers: int = 1,
) -> RepoIndex:
    """The index of a tree given as ``path -> text`` (``cache`` None: built, not saved)."""
    texts = dict(sorted(texts.items()))
    modules = module_names(list(texts))
    keys = {p: file_key(p, modules.get(p), _is_package(p), t) for p, t in texts.items()}
    key = tree_key(keys.items())
    if cache is not None:
        hit = _from_cache(cache, key, texts, modules, keys, root, workers)
        if hit is not None:
            return hit
    notes: list[str] = []
    rows = cache.rows(list(keys.values()), words=True) if cache is not None else {}
    facts: dict[str, FileFacts] = {}
    for path, k in keys.items():
        if k in rows:
            try:
                entry = facts_from_json(rows[k][0], path)
                words, symbol_words = words_from_json(rows[k][1])
            except ValueError as e:
                notes.append(f"index cache: row of {path!r} ignored ({e})")
                continue
            facts[path] = FileFacts(path, entry, words, symbol_words)
    missing = [(p, modules.get(p), _is_package(p), t) for p, t in texts.items() if p not in facts]
    written: dict[str, tuple[str, str]] = {}
    for f, rows_of_f in _parse_all(missing, workers, notes):
        facts[f.path] = f
        if rows_of_f is not None:
            written[f.path] = rows_of_f
    entries = {p: f.entry for p, f in facts.items() if f.entry is not None}

    def build(docs: list[str], symbols: list[Symbol]) -> tuple[Bm25Table, Bm25Table]:
        file_words: list[Words] = [facts[p].words or () for p in docs]
        symbol_words: list[Words] = []
        for p in docs:
            f = facts[p]
            if f.entry is not None:
                sw = f.symbol_words
                symbol_words.extend(
                    sw if len(sw) == len(f.entry.symbols) else [()] * len(f.entry.symbols)
                )
        return Bm25Table.build(file_words), Bm25Table.build(symbol_words)

    index = _assemble(
        texts,
        modules,
        entries,
        build,
        tree_key=key,
        root=root,
        parsed=len(missing),
        notes=tuple([*(cache.notes if cache else ()), *notes]),
        ingredients=_ingredients_reader(cache, keys, texts, workers),
    )
    if cache is not None:
        new = [
            (keys[p], *(written.get(p) or (facts_to_json(f), words_to_json(f))))
            for p, f in facts.items()
            if keys[p] not in rows
        ]
        cache.store(key, sorted(keys.items()), new, index.save_tables)
    return index


def index_repository(
    repo: Repository, *, cache: IndexCache | None = None, workers: int | None = None
) -> RepoIndex:
    """The index of a :class:`~fixbugs.inputs.repo.Repository`'s files (read once, here)."""
    texts = {p: repo.read(p) for p in repo.files()}
    n = workers if workers is not None else (os.cpu_count() or 1)
    return index_texts(texts, root=repo.root, cache=cache, workers=n)


def build_index(
    root: Path, *, cache: IndexCache | None = None, workers: int | None = None
) -> RepoIndex:
    """The index of the work tree at ``root`` (``cache``: where to reuse and save it)."""
    from fixbugs.inputs.repo import Repository

    p = Path(root).resolve()
    return index_repository(
        Repository(root=p, is_git=(p / ".git").exists()), cache=cache, workers=workers
    )


def as_index(files: Mapping[str, str]) -> RepoIndex:
    """``files`` as an index: itself when it is one, else indexed here (not cached)."""
    return files if isinstance(files, RepoIndex) else index_texts(files)
