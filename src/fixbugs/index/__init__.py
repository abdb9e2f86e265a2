"""The repository index: built once per tree, cached by content, read by every stage.

:func:`build_index` / :func:`index_repository` parse a tree's Python files
(``ast``, in worker processes; nothing of the repository runs) into
:class:`ModuleEntry` records of symbols, imports and string literals, and
index the source files' and symbols' words for BM25. The result is kept in
FixBugs' cache (:class:`IndexCache`), keyed by the tree's content, and a
changed tree reuses the rows of its unchanged files.
"""

from fixbugs.index.build import as_index, build_index, index_repository, index_texts
from fixbugs.index.cache import IndexCache, default_index_dir
from fixbugs.index.entries import ImportRef, Literal, ModuleEntry, Symbol, SymbolKind
from fixbugs.index.paths import SOURCE_SUFFIXES, is_source, is_test_path
from fixbugs.index.repo_index import RepoIndex
from fixbugs.index.resolve import (
    MAX_HOPS,
    Target,
    dotted_target,
    member,
    name_in_file,
    resolve_member,
    resolve_name,
)
from fixbugs.index.words import tokenize_code

__all__ = [
    "MAX_HOPS",
    "SOURCE_SUFFIXES",
    "ImportRef",
    "IndexCache",
    "Literal",
    "ModuleEntry",
    "RepoIndex",
    "Symbol",
    "SymbolKind",
    "Target",
    "as_index",
    "build_index",
    "default_index_dir",
    "dotted_target",
    "index_repository",
    "index_texts",
    "is_source",
    "is_test_path",
    "member",
    "name_in_file",
    "resolve_member",
    "resolve_name",
    "tokenize_code",
]
