"""STOPGAP for h-index: the repository index's API, minimally, so h-localize's signals run.

The real :mod:`fixbugs.index` is being built on branch ``h-index``; on merge,
take that branch's version of this folder entirely. This one implements only
the part of the agreed API the localization signals use
(what :mod:`fixbugs.localize.resolve` and the report-code signals call): symbols with their spans
and bases, import statements, module ↔ file, member lookup through bases.
One parse per Python file; a file that does not parse has no symbols.
"""

from __future__ import annotations

import ast
import warnings
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

__all__ = ["ImportRef", "Literal", "ModuleEntry", "RepoIndex", "Symbol", "build_index"]


@dataclass(frozen=True, slots=True)
class Symbol:
    qualname: str
    name: str
    kind: str  # "class" | "function" | "method"
    path: str
    start: int
    end: int
    bases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ImportRef:
    module: str
    names: tuple[str, ...]
    line: int
    level: int


@dataclass(frozen=True, slots=True)
class Literal:
    text: str
    line: int


@dataclass(frozen=True, slots=True)
class ModuleEntry:
    path: str
    module: str
    symbols: tuple[Symbol, ...]
    imports: tuple[ImportRef, ...]
    literals: tuple[Literal, ...]  # string constants, docstrings left out
    parse_error: str | None = None


def _module_name(path: str) -> str:
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


_BODIES = ("body", "orelse", "finalbody")


def _entry(path: str, text: str) -> ModuleEntry:
    """One parse: the statements are walked for definitions and imports (expressions are
    not entered), then one walk over every node for the string literals."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            return ModuleEntry(path, _module_name(path), (), (), (), type(exc).__name__)
    symbols: list[Symbol] = []
    imports: list[ImportRef] = []
    docs: set[int] = set()

    def doc(body: list[ast.stmt]) -> None:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            docs.add(id(body[0].value))

    def visit(body: list[ast.stmt], prefix: str, in_class: bool, top: bool) -> None:
        for child in body:
            if isinstance(child, ast.ClassDef):
                bases = tuple(ast.unparse(b) for b in child.bases)
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                q = prefix + child.name
                symbols.append(
                    Symbol(q, child.name, "class", path, first, child.end_lineno or first, bases)
                )
                doc(child.body)
                visit(child.body, q + ".", True, False)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                q = prefix + child.name
                kind = "method" if in_class else "function"
                symbols.append(Symbol(q, child.name, kind, path, first, child.end_lineno or first))
                doc(child.body)
                visit(child.body, q + ".<locals>.", False, False)
            elif isinstance(child, ast.Import):
                imports.extend(ImportRef(a.name, (), child.lineno, 0) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                names = tuple(a.name for a in child.names)
                imports.append(ImportRef(child.module or "", names, child.lineno, child.level))
            elif top and isinstance(child, ast.Assign) and isinstance(child.value, ast.Call):
                # classes made by a factory at module level: ``Point = namedtuple(...)``
                for t in child.targets:
                    if isinstance(t, ast.Name) and t.id[:1].isupper():
                        line = child.lineno
                        symbols.append(Symbol(t.id, t.id, "class", path, line, line))
            else:
                for field in _BODIES:
                    inner = getattr(child, field, None)
                    if isinstance(inner, list):
                        visit(inner, prefix, in_class, top)
                for handler in getattr(child, "handlers", ()) or ():
                    visit(handler.body, prefix, in_class, top)
                for case in getattr(child, "cases", ()) or ():
                    visit(case.body, prefix, in_class, top)

    doc(tree.body)
    visit(tree.body, "", False, True)
    literals = tuple(
        Literal(n.value, n.lineno)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    )
    return ModuleEntry(path, _module_name(path), tuple(symbols), tuple(imports), literals)


class RepoIndex:
    """The index over a ``path → text`` mapping of the repository's files."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self._files = files
        self.paths: tuple[str, ...] = tuple(sorted(files))
        self._entries: dict[str, ModuleEntry] = {}
        self._modules: dict[str, str] = {}
        self._named: dict[str, list[Symbol]] = defaultdict(list)
        self._by_qual: dict[tuple[str, str], Symbol] = {}
        for path in self.paths:
            if not path.endswith(".py"):
                continue
            e = _entry(path, files[path])
            self._entries[path] = e
            parts = e.module.split(".") if e.module else []
            for start in range(len(parts)):  # "src/pkg/mod.py" is "pkg.mod" too
                self._modules.setdefault(".".join(parts[start:]), path)
            for s in e.symbols:
                self._named[s.name].append(s)
                self._by_qual[(path, s.qualname)] = s

    def entry(self, path: str) -> ModuleEntry | None:
        return self._entries.get(path)

    def text(self, path: str) -> str:
        return self._files.get(path, "")

    def file_of_module(self, dotted: str) -> str | None:
        return self._modules.get(dotted)

    def module_of(self, path: str) -> str | None:
        e = self._entries.get(path)
        return e.module if e else None

    def symbols_named(self, name: str) -> Sequence[Symbol]:
        return self._named.get(name, [])

    def symbol(self, qualname: str, path: str | None = None) -> Symbol | None:
        if path is not None:
            return self._by_qual.get((path, qualname))
        found = [s for s in self._named.get(qualname.rsplit(".", 1)[-1], [])]
        return next((s for s in found if s.qualname == qualname), None)

    def methods_of(self, cls: Symbol) -> Sequence[Symbol]:
        e = self._entries.get(cls.path)
        prefix = cls.qualname + "."
        return [
            s
            for s in (e.symbols if e else ())
            if s.qualname.startswith(prefix) and "." not in s.qualname[len(prefix) :]
        ]

    def resolve_member(self, cls: Symbol, attr: str, *, _depth: int = 0) -> Symbol | None:
        """``cls.attr`` defined on ``cls`` or, first found, on a base class (depth ≤ 10)."""
        for s in self.methods_of(cls):
            if s.name == attr:
                return s
        if _depth >= 10:
            return None
        for base in cls.bases:
            b = self._base_class(cls, base)
            if b is not None and b != cls:
                found = self.resolve_member(b, attr, _depth=_depth + 1)
                if found is not None:
                    return found
        return None

    def _base_class(self, cls: Symbol, base: str) -> Symbol | None:
        """The class a base expression names: in cls's module, imported into it by name
        (``from m import Base``, absolute or relative), or the one class of that name."""
        name = base.rsplit(".", 1)[-1].split("[", 1)[0]
        own = self.symbol(name, cls.path)
        if own is not None and own.kind == "class":
            return own
        here = self.module_of(cls.path) or ""
        package = here if cls.path.endswith("__init__.py") else here.rpartition(".")[0]
        for ref in self.imports_of(cls.path):
            if name not in ref.names:
                continue
            parts = package.split(".") if ref.level and package else []
            parts = parts[: max(0, len(parts) - (ref.level - 1))] if ref.level else []
            module = ".".join([*parts, *([ref.module] if ref.module else [])])
            path = self.file_of_module(module)
            found = self.symbol(name, path) if path else None
            if found is not None and found.kind == "class":
                return found
        classes = [s for s in self._named.get(name, []) if s.kind == "class"]
        return classes[0] if len(classes) == 1 else None

    def imports_of(self, path: str) -> Sequence[ImportRef]:
        e = self._entries.get(path)
        return e.imports if e else ()


def build_index(files: Mapping[str, str]) -> RepoIndex:
    return RepoIndex(files)
