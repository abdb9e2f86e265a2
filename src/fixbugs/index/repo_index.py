"""The repository index: one tree's files, symbols, imports, literals and BM25 tables.

Built once per tree (:mod:`fixbugs.index.build`, cached by content) and
read by every stage of a run: nothing else parses or tokenizes the
repository. It is immutable to its readers, and it is a ``Mapping`` of
path to text, so the signals that take a ``path -> text`` mapping read it
as they read a dict (and a dict given to them is indexed on the spot by
:func:`as_index`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cached_property
from pathlib import Path

from fixbugs.index.entries import ModuleEntry, Symbol
from fixbugs.index.ingredients import FileIngredients
from fixbugs.index.modules import module_aliases
from fixbugs.index.paths import is_test_path
from fixbugs.index.search import Bm25Table

__all__ = ["RepoIndex"]


class RepoIndex(Mapping[str, str]):
    """A tree's index; ``self[path]`` is the file's text (every indexed file is kept)."""

    def __init__(
        self,
        *,
        texts: Mapping[str, str],
        entries: Mapping[str, ModuleEntry],
        modules: Mapping[str, str],
        file_table: Bm25Table,
        file_docs: Sequence[str],
        symbol_table: Bm25Table,
        symbol_docs: Sequence[Symbol],
        tree_key: str = "",
        root: Path | None = None,
        notes: Sequence[str] = (),
        cache_hit: bool = False,
        parsed: int = 0,
        ingredients: Callable[[Sequence[str]], Mapping[str, FileIngredients]] | None = None,
    ) -> None:
        self._texts = dict(sorted(texts.items()))
        self._entries = dict(entries)
        self._modules = dict(modules)
        self._file_table = file_table
        self._file_docs = tuple(file_docs)
        self._symbol_table = symbol_table
        self._symbol_docs = tuple(symbol_docs)
        self.tree_key = tree_key
        self.root = root
        self.notes = tuple(notes)  # what building it had to say (a cache it ignored)
        self.cache_hit = cache_hit  # the whole index came from the cache
        self.parsed = parsed  # files parsed to build it (0 on a cache hit)
        self._read_ingredients = ingredients

    def save_tables(self, folder: Path) -> None:
        """Write the BM25 tables under ``folder`` (what the cache keeps of them)."""
        self._file_table.save(folder / "files")
        self._symbol_table.save(folder / "symbols")

    # Mapping: path -> text
    def __getitem__(self, path: str) -> str:
        return self._texts[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    @property
    def paths(self) -> tuple[str, ...]:
        """Every indexed file, sorted."""
        return tuple(self._texts)

    def text(self, path: str) -> str:
        """The file's text as it was read for the index."""
        return self._texts[path]

    @cached_property
    def _ingredients(self) -> tuple[FileIngredients, ...]:
        if self._read_ingredients is None:
            return ()
        wanted = [
            e.path
            for e in self.entries()
            if e.parse_error is None and e.path.endswith(".py") and not is_test_path(e.path)
        ]
        got = self._read_ingredients(wanted)
        return tuple(got[p] for p in wanted if p in got)

    def ingredients(self) -> tuple[FileIngredients, ...]:
        """The repair ingredients of every Python source file that parsed, tests aside, by
        path: read on first ask (from the cache, or cut by the builder's reader)."""
        return self._ingredients

    def entry(self, path: str) -> ModuleEntry | None:
        """The module entry of a ``.py`` file (None for any other file)."""
        return self._entries.get(path)

    @cached_property
    def _sorted_entries(self) -> tuple[ModuleEntry, ...]:
        return tuple(self._entries[p] for p in sorted(self._entries))

    def entries(self) -> tuple[ModuleEntry, ...]:
        """Every module entry, by path."""
        return self._sorted_entries

    def module_of(self, path: str) -> str | None:
        """The dotted module of a ``.py`` file (``pkg/__init__.py`` is ``pkg``)."""
        return self._modules.get(path)

    @cached_property
    def _aliases(self) -> dict[str, str]:
        return module_aliases(self._modules, self._modules)

    def file_of_module(self, dotted: str) -> str | None:
        """The file of a dotted module: its own name first, then any dotted tail of a
        path (``src/pkg/mod.py`` answers ``pkg.mod`` and ``src.pkg.mod``)."""
        return self._aliases.get(dotted)

    def _grouped(self, key: Callable[[Symbol], str]) -> dict[str, tuple[Symbol, ...]]:
        """Every symbol by ``key``, by path then position."""
        out: dict[str, list[Symbol]] = defaultdict(list)
        for e in self.entries():
            for s in e.symbols:
                out[key(s)].append(s)
        return {k: tuple(v) for k, v in out.items()}

    @cached_property
    def _by_name(self) -> dict[str, tuple[Symbol, ...]]:
        return self._grouped(lambda s: s.name)

    @cached_property
    def _by_qualname(self) -> dict[str, tuple[Symbol, ...]]:
        return self._grouped(lambda s: s.qualname)

    def symbols_named(self, name: str) -> tuple[Symbol, ...]:
        """Every class, function and method called ``name``, by path then position."""
        return self._by_name.get(name, ())

    def symbol(self, qualname: str, path: str | None = None) -> Symbol | None:
        """The symbol of that qualified name (in ``path``, else the first by path)."""
        for s in self._by_qualname.get(qualname, ()):
            if path is None or s.path == path:
                return s
        return None

    def methods_of(self, cls: Symbol) -> tuple[Symbol, ...]:
        """The methods defined in the body of class ``cls``."""
        entry = self._entries.get(cls.path)
        if entry is None or cls.kind != "class":
            return ()
        depth = cls.qualname.count(".") + 1
        prefix = cls.qualname + "."
        return tuple(
            s
            for s in entry.symbols
            if s.kind == "method"
            and s.qualname.startswith(prefix)
            and s.qualname.count(".") == depth
        )

    @cached_property
    def _imports(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, tuple[str, ...]] = {}
        for path, entry in self._entries.items():
            targets: list[str] = []
            for ref in entry.imports:
                for name in ref.names:
                    hit = self.file_of_module(f"{ref.module}.{name}")
                    if hit is not None:
                        targets.append(hit)
                hit = self.file_of_module(ref.module) if ref.module else None
                if hit is not None:
                    targets.append(hit)
            out[path] = tuple(t for t in dict.fromkeys(targets) if t != path)
        return out

    @cached_property
    def _importers(self) -> dict[str, tuple[str, ...]]:
        out: dict[str, list[str]] = defaultdict(list)
        for path in sorted(self._imports):
            for target in self._imports[path]:
                out[target].append(path)
        return {k: tuple(v) for k, v in out.items()}

    def imports_of(self, path: str) -> tuple[str, ...]:
        """The repository files ``path`` imports (``from m import n``: ``m.n`` if a module,
        and ``m``), in the order of its imports."""
        return self._imports.get(path, ())

    def importers_of(self, path: str) -> tuple[str, ...]:
        """The files that import ``path``, sorted."""
        return self._importers.get(path, ())

    @cached_property
    def _lowered_literals(self) -> tuple[tuple[str, str, int], ...]:
        return tuple(
            (lit.text.lower(), e.path, lit.line)
            for e in self.entries()
            for lit in e.literals
            if not lit.docstring
        )

    def literal_hits(self, fragment: str) -> tuple[tuple[str, int], ...]:
        """(path, line) of every string literal (docstrings aside) holding ``fragment``,
        case folded."""
        want = fragment.lower()
        return tuple((p, ln) for text, p, ln in self._lowered_literals if want in text)

    def bm25(self, query: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` source files (tests aside) that best match ``query``'s words, with
        their BM25 scores; identifiers are split into words (:mod:`fixbugs.index.words`)."""
        return [(self._file_docs[i], s) for i, s in self._file_table.top(query, k)]

    def bm25_symbols(self, query: str, k: int) -> list[tuple[Symbol, float]]:
        """As :meth:`bm25`, over the classes, functions and methods of non-test modules
        (a class's document leaves its methods' lines to them)."""
        return [(self._symbol_docs[i], s) for i, s in self._symbol_table.top(query, k)]
