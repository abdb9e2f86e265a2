"""Building a :class:`~fixbugs.index.repo_index.RepoIndex`: read, key, reuse, parse, save.

The tree is read through :class:`~fixbugs.inputs.repo.Repository` (the one
walk and the one way to read a file: no link followed, no FIFO opened).
Every file gets a content key; the tree's key is theirs combined. A tree in
the cache is read back whole; otherwise the rows of unchanged files are
reused and only the changed ones are parsed, across the cores in worker
processes (``python -m fixbugs.index.worker``: a fresh interpreter that
imports only the parser, so it starts fast and inherits nothing of this
process), and the new index is saved for the next run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from fixbugs.index.cache import IndexCache, file_key, tree_key
from fixbugs.index.childenv import run_own_module
from fixbugs.index.entries import ModuleEntry, Symbol
from fixbugs.index.modules import module_names
from fixbugs.index.parse import FileFacts, Words, file_facts
from fixbugs.index.paths import is_source, is_test_path
from fixbugs.index.records import facts_from_json, facts_to_json, words_from_json, words_to_json
from fixbugs.index.repo_index import RepoIndex
from fixbugs.index.search import Bm25Table

if TYPE_CHECKING:
    from fixbugs.inputs.repo import Repository

__all__ = ["as_index", "build_index", "index_repository", "index_texts"]

POOL_MIN_FILES = 200  # fewer files to parse than this: parsed here, a worker costs more
_WORKER_TIMEOUT_S = 600.0


def _is_package(path: str) -> bool:
    return path == "__init__.py" or path.endswith("/__init__.py")


def _documents(paths: Sequence[str]) -> list[str]:
    """The files BM25 ranks: source that is not a test (sorted, as the index lists them)."""
    return [p for p in paths if is_source(p) and not is_test_path(p)]


_Item = tuple[str, str | None, bool, str]  # (path, module, is_package, text)
_Parsed = tuple[FileFacts, tuple[str, str] | None]  # facts, and their rows when a worker wrote them


def _parse_in_worker(batch: Sequence[_Item]) -> list[_Parsed] | None:
    """Facts of ``batch`` from one worker process, with its rows; None if it failed."""
    stdin = "".join(json.dumps(list(item), ensure_ascii=False) + "\n" for item in batch)
    done = run_own_module(
        "fixbugs.index.worker",
        stdin=stdin.encode("utf-8", "surrogatepass"),
        timeout_s=_WORKER_TIMEOUT_S,
    )
    if not done.ok:
        return None
    lines = done.stdout.decode("utf-8", "surrogatepass").split("\n")
    if len(lines) < 2 * len(batch):
        return None
    out: list[_Parsed] = []
    try:
        for i, (path, _, _, _) in enumerate(batch):
            rows = (lines[2 * i], lines[2 * i + 1])
            entry = facts_from_json(rows[0], path)  # validated like a cache row
            words, symbol_words = words_from_json(rows[1])
            out.append((FileFacts(path, entry, words, symbol_words), rows))
    except ValueError:
        return None
    return out


def _parse_all(items: Sequence[_Item], workers: int, notes: list[str]) -> list[_Parsed]:
    """Facts of every item, in order: in worker processes when there are many."""
    if workers <= 1 or len(items) < POOL_MIN_FILES:
        return [(file_facts(*item), None) for item in items]
    # balance the workers by bytes, biggest files first
    order = sorted(range(len(items)), key=lambda i: -len(items[i][3]))
    batches: list[list[int]] = [[] for _ in range(workers)]
    sizes = [0] * workers
    for i in order:
        w = sizes.index(min(sizes))
        batches[w].append(i)
        sizes[w] += len(items[i][3]) + 1
    out: list[_Parsed | None] = [None] * len(items)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda b: _parse_in_worker([items[i] for i in b]), batches))
    for batch, parsed in zip(batches, results, strict=True):
        if parsed is None:
            notes.append(f"an index worker failed; {len(batch)} file(s) parsed in this process")
            parsed = [(file_facts(*items[i]), None) for i in batch]
        for i, p in zip(batch, parsed, strict=True):
            out[i] = p
    return [p for p in out if p is not None]


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
        hit = _from_cache(cache, key, texts, modules, keys, root)
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
