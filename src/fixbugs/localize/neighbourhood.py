"""The neighbourhood of a strong candidate: the functions it calls.

A report's code calls the public entry point (``autowrap(expr)``,
``ds.copy(deep=True)``); the fault is as often in what that entry point
calls as in its own lines. So the functions the report's code uses
(evidence of kind ``call`` or ``name`` that names a function) lend a part of
their suspicion to their callees: plain calls resolved in the function's
module (``helper(x)``, an imported function), ``self.method(...)`` /
``cls.method(...)`` resolved on the function's class, its bases included.

FileEvidence of kind ``neighbour``, whose lines are the callee's span. It is
weak alone (:mod:`fixbugs.localize.rank` weighs it low): it lifts a file
that other signals (BM25, symbols) already point at.
"""

from __future__ import annotations

import ast
import textwrap
import warnings
from collections.abc import Sequence

from agentrt import parse_python
from fixbugs.index import RepoIndex, Symbol, Target, is_test_path, member, resolve_name
from fixbugs.localize.evidence import FileEvidence

__all__ = ["MAX_SEEDS", "callees", "neighbour_evidence"]

MAX_SEEDS = 8  # only the strongest candidates' callees are followed
_SHARE = 0.5  # a callee's suspicion: this share of its caller's


def _enclosing_class(index: RepoIndex, fn: Symbol) -> Symbol | None:
    owner = fn.qualname.rpartition(".")[0]
    found = index.symbol(owner, fn.path) if owner else None
    return found if found is not None and found.kind == "class" else None


def callees(index: RepoIndex, fn: Symbol) -> list[Symbol]:
    """The repository functions ``fn``'s body calls, resolved as far as its text allows."""
    lines = index.text(fn.path).splitlines()[fn.start - 1 : fn.end]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = parse_python(textwrap.dedent("\n".join(lines)))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return []
    module = index.module_of(fn.path) or ""
    cls = _enclosing_class(index, fn)
    out: dict[tuple[str, str], Symbol] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        target: Target | None = None
        f = node.func
        if isinstance(f, ast.Name):
            own = index.symbol(f.id, fn.path)
            target = Target(fn.path, own) if own is not None else resolve_name(index, module, f.id)
        elif (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id in ("self", "cls")
            and cls is not None
        ):
            target = member(index, Target(cls.path, cls), f.attr)
        if target is None or target.symbol is None or target.symbol.kind == "class":
            continue
        sym = target.symbol
        if sym != fn and not is_test_path(sym.path):
            out.setdefault((sym.path, sym.qualname), sym)
    return list(out.values())


def neighbour_evidence(index: RepoIndex, seeds: Sequence[FileEvidence]) -> list[FileEvidence]:
    """Callees of the functions that ``seeds`` (call/name evidence with a span) point at."""
    spans = sorted(
        ((e.strength, e.path, a, b) for e in seeds if e.lines for a, b in e.lines),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    out: list[FileEvidence] = []
    seen: set[tuple[str, int]] = set()
    for strength, path, start, _ in spans[:MAX_SEEDS]:
        entry = index.entry(path)
        symbols = entry.symbols if entry is not None else ()
        fn = next((s for s in symbols if s.start == start and s.kind != "class"), None)
        if fn is None:
            continue
        for callee in callees(index, fn):
            key = (callee.path, callee.start)
            if key in seen:
                continue
            seen.add(key)
            out.append(
                FileEvidence(
                    callee.path,
                    "neighbour",
                    _SHARE * strength,
                    f"{fn.qualname} (used by the report) calls {callee.qualname}",
                    ((callee.start, callee.end),),
                )
            )
    return out
