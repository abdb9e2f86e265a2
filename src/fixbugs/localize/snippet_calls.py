"""What the report's code imports and calls, resolved to the repository's definitions.

A report's snippet (``from pkg.sub import Thing; Thing(x).method()``) is
the most precise pointer an issue holds: it names the entry point the user
called, and the call chain leads to the class that defines ``method``. The
statements (:func:`fixbugs.localize.report_code.report_statements`) are
read in order, as an interpreter would bind their names, but nothing runs:

* ``import m`` / ``from m import n as a`` bind names to modules and to the
  definitions they re-export (:mod:`fixbugs.index.resolve`); a star
  import makes every free name of the code a name of that module;
* ``x = Thing(...)`` makes ``x`` an instance of ``Thing``; ``x.method()``
  and ``Thing(...).method()`` are ``Thing``'s ``method``, or the one a base
  class defines;
* a method called on an object of unknown type names every method of that
  name, each by ``1/k`` of ``k`` definitions (none past :data:`MAX_AMBIGUOUS`).

Each use is a :class:`Use` of a symbol with a weight: a call through its
owner counts most, a constructor call less (the class is big), an import
alone least. :func:`call_evidence` turns them into evidence of kind
``call``, whose lines are the symbol's span, so regions can name the
function.
"""

from __future__ import annotations

import ast
import builtins
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fixbugs.index import RepoIndex, Symbol, Target, is_test_path, member, resolve_name
from fixbugs.localize.evidence import FileEvidence
from fixbugs.localize.report_code import report_statements

__all__ = ["MAX_AMBIGUOUS", "Use", "call_evidence", "code_uses", "uses_evidence"]

MAX_AMBIGUOUS = 8  # a method name defined in more classes than this points nowhere
_CALLED = 1.0  # a function or method the code calls through a known owner
_CONSTRUCTED = 0.6  # a class the code instantiates (the whole class is a weaker pointer)
_IMPORTED = 0.35  # a name the code imports and never uses otherwise
_REFERENCED = 0.5  # a name the code mentions (an argument, a value) without calling
_GUESSED = 0.5  # a method of unknown owner: shared by its k definitions
_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True, slots=True)
class Use:
    """One definition the report's code uses, how, and how much that says."""

    path: str
    symbol: Symbol | None  # None: the module itself
    weight: float
    how: str


@dataclass(frozen=True, slots=True)
class _Instance:
    cls: Symbol


_Value = Target | _Instance


class _Reader:
    def __init__(self, index: RepoIndex) -> None:
        self.index = index
        self.env: dict[str, _Value] = {}
        self.stars: list[str] = []
        self.uses: list[Use] = []

    # --- binding ---------------------------------------------------------------
    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                head = a.name if a.asname else a.name.split(".", 1)[0]
                path = self.index.file_of_module(head)
                if path is not None:
                    self.env[a.asname or head] = Target(path)
            return
        if isinstance(node, ast.ImportFrom):
            if node.level or not node.module:
                return  # a snippet's relative import names no module of ours
            for a in node.names:
                if a.name == "*":
                    if self.index.file_of_module(node.module) is not None:
                        self.stars.append(node.module)
                    continue
                found = resolve_name(self.index, node.module, a.name)
                if found is not None:
                    self.env[a.asname or a.name] = found
                    self.use(found, _IMPORTED, f"imported by the report's code ({a.name})")
            return
        if isinstance(node, ast.Assign | ast.AnnAssign):
            value = node.value
            got = self.expr(value) if value is not None else None
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    if isinstance(got, _Instance | Target):
                        self.env[t.id] = got
                    else:
                        self.env.pop(t.id, None)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                self.statement(child)
            elif isinstance(child, ast.expr):
                self.expr(child)

    # --- expressions -------------------------------------------------------------
    def name(self, ident: str) -> _Value | None:
        if ident in self.env:
            return self.env[ident]
        if ident in _BUILTINS:
            return None
        for module in self.stars:
            found = resolve_name(self.index, module, ident)
            if found is not None and found.symbol is not None:
                self.env[ident] = found
                return found
        return None

    def expr(self, node: ast.expr) -> _Value | None:
        """The value ``node`` has, when the code makes it known; its uses are recorded."""
        if isinstance(node, ast.Name):
            got = self.name(node.id)
            if isinstance(got, Target) and got.symbol is not None:
                self.use(got, _REFERENCED, f"named in the report's code ({node.id})")
            return got
        if isinstance(node, ast.Attribute):
            return self.attribute(node, called=False)
        if isinstance(node, ast.Call):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                self.expr(arg)
            if isinstance(node.func, ast.Attribute):
                got = self.attribute(node.func, called=True)
            elif isinstance(node.func, ast.Name):
                got = self.name(node.func.id)
            else:
                got = self.expr(node.func)
            if isinstance(got, Target) and got.symbol is not None:
                sym = got.symbol
                if sym.kind == "class":
                    self.use(got, _CONSTRUCTED, f"the report's code constructs {sym.name}")
                    for init in ("__init__", "__new__"):
                        ctor = member(self.index, got, init)
                        if ctor is not None and ctor.symbol is not None:
                            self.use(ctor, _CONSTRUCTED, f"{sym.name}({{...}}) runs it")
                    return _Instance(sym)
                self.use(got, _CALLED, f"the report's code calls {sym.qualname}")
            return None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child)
        return None

    def attribute(self, node: ast.Attribute, *, called: bool) -> _Value | None:
        base = self.expr(node.value)
        if isinstance(base, _Instance):
            base = Target(base.cls.path, base.cls)
        if isinstance(base, Target):
            found = member(self.index, base, node.attr)
            if found is not None:
                if not called and found.symbol is not None and found.symbol.kind != "class":
                    self.use(found, _REFERENCED, f"the report's code uses {found.symbol.qualname}")
                return found
            return None
        if called:
            self.guess(node.attr)
        return None

    def guess(self, attr: str) -> None:
        """``obj.attr()`` on an object of unknown type: every method ``attr``, shared."""
        if attr.startswith("__") or attr in _BUILTINS:
            return
        methods = [
            s
            for s in self.index.symbols_named(attr)
            if s.kind == "method" and not is_test_path(s.path)
        ]
        if not methods or len(methods) > MAX_AMBIGUOUS:
            return
        for s in methods:
            self.use(
                Target(s.path, s),
                _GUESSED / len(methods),
                f"the report's code calls .{attr}() ({len(methods)} methods of that name)",
            )

    def use(self, target: Target, weight: float, how: str) -> None:
        if not is_test_path(target.path):
            self.uses.append(Use(target.path, target.symbol, weight, how))


def code_uses(index: RepoIndex, statements: Sequence[ast.stmt]) -> list[Use]:
    """The definitions ``statements`` use, in the order the code uses them."""
    reader = _Reader(index)
    for node in statements:
        try:
            reader.statement(node)
        except RecursionError:
            continue  # a pathological expression costs its statement only
    return reader.uses


def call_evidence(index: RepoIndex, report: str) -> list[FileEvidence]:
    """FileEvidence of kind ``call``: files whose definitions the report's code uses.

    See :func:`uses_evidence` for its strengths and lines.
    """
    return uses_evidence(code_uses(index, report_statements(report)))


def uses_evidence(uses: Iterable[Use], kind: str = "call") -> list[FileEvidence]:
    """FileEvidence of ``uses``: one per file (its best use, plus a fifth of the rest, at most
    1), and one per function used, whose lines are that function's span (for regions)."""
    best: dict[tuple[str, str], Use] = {}
    for u in uses:
        key = (u.path, u.symbol.qualname if u.symbol is not None else "")
        if key not in best or u.weight > best[key].weight:
            best[key] = u
    per_file: dict[str, list[Use]] = defaultdict(list)
    for u in best.values():
        per_file[u.path].append(u)
    out: list[FileEvidence] = []
    for path, found in per_file.items():
        found.sort(key=lambda u: -u.weight)
        strength = min(1.0, found[0].weight + 0.2 * sum(u.weight for u in found[1:]))
        out.append(FileEvidence(path, kind, strength, found[0].how))
        for u in found:
            if u.symbol is not None and u.symbol.kind != "class":
                span = ((u.symbol.start, u.symbol.end),)
                out.append(FileEvidence(path, kind, u.weight, u.how, span))
    return out
