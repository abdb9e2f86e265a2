"""Static localization signals: cheap, explainable reasons to suspect a file.

Each function reads the repository (a ``path → text`` mapping: the run's
:class:`~fixbugs.index.RepoIndex`, whose parsed modules and BM25 tables
they use, or a plain dict, indexed on the spot so they stay testable on
one) plus what the report says, and returns :class:`FileEvidence`. None of
them parses or tokenizes the repository itself, and none runs code. Their
strengths are comparable only within a kind; :mod:`fixbugs.localize.rank`
weighs the kinds.

* traceback frames: the deepest frame in project, non-test code is where
  the failure surfaced; its callers are weaker suspects.
* failing tests' imports (AST): a test exercises the modules it imports.
* naming convention: ``tests/rules/test_git_push.py`` tests
  ``…/rules/git_push.py``.
* report symbols: identifiers the report names that some file defines,
  weighted by how few files define them (``match`` is everywhere).
* BM25 over files, with identifiers split into their words.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath

from fixbugs.index import ModuleEntry, RepoIndex, as_index, is_test_path
from fixbugs.index.paths import SOURCE_SUFFIXES, is_source
from fixbugs.index.words import STOP_WORDS as _STOP
from fixbugs.index.words import tokenize_code
from fixbugs.inputs import pieces as bounded
from fixbugs.localize.evidence import FileEvidence
from fixbugs.localize.report_text import code_words
from fixbugs.localize.traceback import ParsedFailure

__all__ = [
    "SOURCE_SUFFIXES",
    "bm25_evidence",
    "import_evidence",
    "is_source",
    "module_tests",
    "naming_evidence",
    "package_tests",
    "symbol_evidence",
    "tokenize_code",
    "traceback_evidence",
]

REACH_HOPS = 3  # imports from a test file to a module it still counts for (package_tests)
_CALLER_DECAY = 0.6  # each frame further from the failure is this much less suspect
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ALPHANUM = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def traceback_evidence(parsed: ParsedFailure) -> list[FileEvidence]:
    """Project, non-test frames; innermost 1.0, each caller ``_CALLER_DECAY`` times less."""
    out: list[FileEvidence] = []
    for i, tb in enumerate(parsed.tracebacks):
        mine = sorted((f for f in tb if f.path and not is_test_path(f.path)), key=lambda f: f.depth)
        cut = i in parsed.truncated
        for rank, f in enumerate(mine):
            assert f.path is not None
            where = f" in {f.function}" if f.function else ""
            role = "deepest project frame" if rank == 0 else f"caller frame #{rank}"
            if cut:  # the failure is in code this frame calls, which the paste left out
                role = "innermost frame shown (trace cut below)" if rank == 0 else role
            out.append(
                FileEvidence(
                    f.path,
                    "traceback",
                    _CALLER_DECAY ** (rank + cut),
                    f"{role} {f.path}:{f.line}{where}",
                    ((f.line, f.line),),
                )
            )
    for w in parsed.warnings:
        if w.path and not is_test_path(w.path):
            out.append(
                FileEvidence(
                    w.path,
                    "warning",
                    1.0,
                    f"warning raised at {w.path}:{w.line}",
                    ((w.line, w.line),),
                )
            )
    return out


def _absolute_imports(entry: ModuleEntry) -> list[tuple[str, tuple[str, ...]]]:
    """(module, imported names) of each absolute import statement (relative ones are not
    followed by these signals)."""
    return [(ref.module, ref.names) for ref in entry.imports if ref.level == 0 and ref.module]


def _import_targets(module: str, names: Sequence[str], index: RepoIndex) -> list[str]:
    """The repository files one import statement names (``from m import n``: ``m.n``, ``m``)."""
    targets = [f for n in names if (f := index.file_of_module(f"{module}.{n}")) is not None]
    if (own := index.file_of_module(module)) is not None:
        targets.append(own)
    return list(dict.fromkeys(targets))


def _named_source(test: str) -> str | None:
    """The file name a test file is named for (``test_x.py`` / ``x_test.py`` → ``x.py``)."""
    p = PurePosixPath(test)
    stem = p.stem.removeprefix("test_").removesuffix("_test")
    return None if not stem or stem == p.stem else stem + p.suffix


def import_evidence(test_files: Sequence[str], files: Mapping[str, str]) -> list[FileEvidence]:
    """Modules the failing test files import, resolved to repository files."""
    index = as_index(files)
    out: list[FileEvidence] = []
    for test in test_files:
        entry = index.entry(test)
        if entry is None:
            continue
        for module, names in _absolute_imports(entry):
            for path in _import_targets(module, names, index):
                if not is_test_path(path):
                    out.append(
                        FileEvidence(path, "import", 1.0, f"imported by failing test {test}")
                    )
    return out


def naming_evidence(test_files: Sequence[str], files: Iterable[str]) -> list[FileEvidence]:
    """Source files named like the failing test files (``test_x.py`` / ``x_test.py`` → ``x.py``).

    A candidate whose folders also match the test's (``tests/rules/`` and
    ``pkg/rules/``) is a stronger match than one elsewhere.
    """
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in files:
        if not is_test_path(path) and is_source(path):
            by_name[PurePosixPath(path).name].append(path)
    out: list[FileEvidence] = []
    for test in test_files:
        name = _named_source(test)
        if name is None:
            continue
        test_dirs = [
            d for d in PurePosixPath(test).parent.parts if d not in ("tests", "test", "testing")
        ]
        for path in by_name.get(name, []):
            src_dirs = PurePosixPath(path).parent.parts
            shared = sum(
                1 for a, b in zip(reversed(test_dirs), reversed(src_dirs), strict=False) if a == b
            )
            strength = (
                1.0 if shared == len(test_dirs) else 0.5 + 0.5 * shared / max(1, len(test_dirs))
            )
            out.append(FileEvidence(path, "naming", strength, f"named like failing test {test}"))
    return out


def module_tests(path: str, files: Mapping[str, str]) -> list[str]:
    """The test files of the module at ``path``, sorted: named for it, or importing it.

    The two signals above read the other way, so the reproduction (which
    existing tests to run) and the validation (which tests a changed module
    has) ask the same question the localization answers. A package's
    ``__init__`` counts by name only: every import of the package would
    name it. ``conftest.py`` is no test file to run.
    """
    if is_test_path(path) or not path.endswith(".py"):
        return []
    name = PurePosixPath(path).name
    stem = PurePosixPath(path).stem
    index = as_index(files)
    out: list[str] = []
    for test in index.paths:
        if not test.endswith(".py") or not is_test_path(test):
            continue
        if PurePosixPath(test).name == "conftest.py":
            continue
        entry = index.entry(test)
        if _named_source(test) == name or (
            stem != "__init__"
            and entry is not None
            and any(path in _import_targets(m, n, index) for m, n in _absolute_imports(entry))
        ):
            out.append(test)
    return sorted(out)


def package_tests(
    path: str, files: Mapping[str, str], *, exclude: Iterable[str] = (), cap: int = 12
) -> list[str]:
    """The test files of the package holding ``path``, beyond ``exclude``: at most ``cap``.

    A test file belongs to the package when it imports one of the package's
    modules (the index's import graph, :meth:`RepoIndex.importers_of`) or is
    named for one; those that import ``path`` itself come first. Last come
    the test files that reach ``path`` through other modules of the
    repository (at most :data:`REACH_HOPS` imports away, the nearest first):
    ``tests/test_black.py`` imports ``black``, which imports
    ``blib2to3/pgen2/driver.py``; fastapi's tests import ``fastapi``, whose
    ``__init__`` leads to ``fastapi/dependencies/utils.py``. Without them 8
    of the 123 real fixes of the dev sets and the pool's BugsInPy cases had
    no test file at all (MEASUREMENTS.md). Validation runs them once, on the
    leading fix (:mod:`fixbugs.stages.lead`): a change can break what its
    module's own tests never reach.
    """
    if is_test_path(path) or not path.endswith(".py"):
        return []
    index = as_index(files)
    folder = PurePosixPath(path).parent
    siblings = [
        p
        for p in index.paths
        if p.endswith(".py") and not is_test_path(p) and PurePosixPath(p).parent == folder
    ]
    names = {PurePosixPath(p).name for p in siblings if PurePosixPath(p).stem != "__init__"}
    skip = set(exclude)
    first = [t for t in index.importers_of(path) if _runnable_test(t)]
    rest = sorted(
        {t for p in siblings if p != path for t in index.importers_of(p) if _runnable_test(t)}
        | {t for t in index.paths if _runnable_test(t) and _named_source(t) in names}
    )
    out = [t for t in dict.fromkeys([*first, *rest]) if t not in skip]
    if len(out) < cap:
        out += [t for t in _reaching_tests(index, path) if t not in skip and t not in out]
    return out[:cap]


def _reaching_tests(index: RepoIndex, path: str) -> list[str]:
    """Test files that import ``path`` through other modules of the repository, at most
    :data:`REACH_HOPS` imports away: the nearest first, then by name."""
    seen, level, out = {path}, [path], []
    for _ in range(REACH_HOPS):
        found: set[str] = set()
        upper: set[str] = set()
        for module in level:
            for importer in index.importers_of(module):
                if importer not in seen:
                    (found if _runnable_test(importer) else upper).add(importer)
        seen |= found | upper
        out += sorted(found)
        level = sorted(p for p in upper if not is_test_path(p))  # conftest, helpers: no
    return out


def _runnable_test(path: str) -> bool:
    return path.endswith(".py") and is_test_path(path) and PurePosixPath(path).name != "conftest.py"


def _definitions(entry: ModuleEntry) -> set[str]:
    """The module's classes and functions, nested ones included, and its factory-made
    classes (``Point = namedtuple(...)``)."""
    return {s.name for s in entry.symbols} | {s.name for s in entry.assigned}


def _phrases(report: str) -> dict[str, float]:
    """Names a report may mean in prose, keyed by their folded form (lower case, no
    underscores): "corrected command" → ``CorrectedCommand``/``corrected_command``.
    Phrases of two or three words count fully; a single word only half, since
    ``value`` or ``settings`` in prose is a weaker pointer than ``Settings`` in code.
    """
    words = [w.lower() for w in bounded.findall(_ALPHANUM, report)]
    out: dict[str, float] = {}
    for n, weight in ((1, 0.5), (2, 1.0), (3, 1.0)):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            if any(w in _STOP for w in gram) or sum(map(len, gram)) < 5:
                continue
            key = "".join(gram)
            out[key] = max(out.get(key, 0.0), weight)
    return out


def symbol_evidence(
    report: str,
    files: Mapping[str, str],
    *,
    exclude: Iterable[str] = (),
    index: RepoIndex | None = None,
) -> list[FileEvidence]:
    """Functions and classes named in the report, matched to the files that define them.

    A symbol defined in ``k`` source files gives each of them ``1/k``: rare
    names point somewhere, names every module defines point nowhere. Names
    the report writes as code count fully; names it says in words ("the
    corrected command") count through :func:`_phrases`. ``exclude`` holds
    names already accounted for elsewhere (the functions of traceback frames
    mapped to their files), so one mention is not counted twice. The
    project's own name is no symbol's: a Sphinx user writes "Sphinx 4.1" of
    the project, not of ``sphinx.application.Sphinx``.
    """
    skip = set(exclude)
    own = _package_names(files)
    named = {
        w
        for w in code_words(report)
        if len(w) > 2 and w.lower() not in _STOP and w not in skip and w.lower() not in own
    }
    phrases = _phrases(report)
    defined_in: dict[str, list[str]] = defaultdict(list)
    weight_of: dict[str, float] = {}
    for entry in as_index(files).entries():
        path = entry.path
        if not is_test_path(path):
            for name in _definitions(entry):
                if name in skip or name.lower() in own:
                    continue
                w = 1.0 if name in named else phrases.get(name.lower().replace("_", ""), 0.0)
                if w > 0:
                    defined_in[name].append(path)
                    weight_of[name] = w
    per_file: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for name, paths in defined_in.items():
        for path in paths:
            per_file[path].append((weight_of[name] / len(paths), name))
    out: list[FileEvidence] = []
    for path, hits in per_file.items():
        hits.sort(reverse=True)
        strength = min(1.0, sum(w for w, _ in hits))
        names = ", ".join(n for _, n in hits[:4])
        out.append(FileEvidence(path, "symbol", strength, f"defines {names} named in the report"))
    return out


def _package_names(files: Mapping[str, str]) -> set[str]:
    """The repository's top-level packages (``pkg/__init__.py``, ``src/pkg/__init__.py``),
    lower-cased: the names its users call the project by."""
    out: set[str] = set()
    for path in files:
        parts = path.split("/")
        if parts[-1] == "__init__.py" and (
            len(parts) == 2 or (len(parts) == 3 and parts[0] == "src")
        ):
            out.add(parts[-2].lower())
    return out


def bm25_evidence(report: str, files: Mapping[str, str], *, top: int = 20) -> list[FileEvidence]:
    """BM25 of the report against each source file (its path counted as text too): the
    index's table (:meth:`fixbugs.index.RepoIndex.bm25`), scores relative to the best."""
    hits = as_index(files).bm25(report, top)
    if not hits:
        return []
    best = hits[0][1]
    return [
        FileEvidence(path, "bm25", score / best, f"BM25 {score:.1f} against the report")
        for path, score in hits
    ]
