"""Suspicious regions: the files' evidence brought down to a function and a few lines.

A file ranking says *where to look*; a root cause must say *which code*.
Every signal that knows a line contributes a hit: traceback frames, quoted
code lines, string literals the report shows, SBFL's suspicious ranges, the
lines a code-host link points at, the functions the failing assertion calls
or a failing test is named for, literals that appear in the assertion's
expected or actual values, and, as the weakest hint, the functions whose
code uses the report's rarest identifiers
(:mod:`fixbugs.localize.function_match`). Hits are grouped by their
enclosing function (AST spans), and each group becomes one region: the
whole function when it is short, else :data:`MAX_REGION_LINES` lines that
hold its hits and, among such windows, say most of the report's identifiers
(or, with no line evidence, its lines richest in them). A region is scored
by its file's rank score, scaled by how much of the file's evidence it
holds, plus its strongest piece of evidence: within a file the
best-evidenced region comes first, and across files a region with strong
evidence of its own (a line a link names) can pass the best region of a
file ranked above it only by name. Every region carries the reasons behind it.

Pure: a ``path → text`` mapping and the ranking in, regions out.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentrt import parse_python
from fixbugs.localize.assertions import assertion_values, called_names
from fixbugs.localize.function_match import (
    ReportIdentifiers,
    best_lines,
    docstring_lines,
    function_matches,
    richest_window,
)
from fixbugs.localize.rank import DEFAULT_WEIGHTS, RankedFile
from fixbugs.localize.report_text import evidence_text
from fixbugs.localize.sbfl import suspicious_ranges
from fixbugs.pyenv.testid import TestId

__all__ = ["Region", "function_spans", "region_at", "sbfl_ranges", "suspicious_regions"]

LINE_KINDS = ("traceback", "quoted", "literal", "warning", "sbfl", "path")  # path: a link's lines
# evidence whose lines are a whole function's span (a function the report's code calls,
# or names): a hit on the function, not on one of its lines
SPAN_KINDS = ("call", "name", "neighbour")
# evidence that names many lines of a file says which line in words of its own
_LINE_LABELS = {
    "literal": "a string literal the report shows",
    "quoted": "a code line the report quotes",
}
# a region wider than this is narrowed around its hits; as wide as a root cause may be
# and still say which lines (fixbugs.eval.score.MAX_REGION_WIDTH)
MAX_REGION_LINES = 20
NAME_LITERAL_FACTOR = 0.3  # a literal that is a bare name (see _name_literal_lines)
WORD_TIEBREAK = 0.6  # the identifier match's weight beside other evidence


@dataclass(frozen=True, slots=True)
class Region:
    """A function (or module-level code) and a line range in one file, with reasons."""

    path: str
    function: str | None
    start: int
    end: int
    score: float
    reasons: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "function": self.function,
            "lines": [self.start, self.end],
            "score": round(self.score, 4),
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True, slots=True)
class _Hit:
    line: int
    weight: float
    reason: str
    exact: bool = True  # False: about the whole function (its def line stands for it)


def function_spans(text: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, last line) of every function, decorators included."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = parse_python(text)
        except (SyntaxError, ValueError):
            return []
    out: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    out.append((name, first, child.end_lineno or child.lineno))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def _enclosing(spans: Sequence[tuple[str, int, int]], line: int) -> tuple[str, int, int] | None:
    inside = [s for s in spans if s[1] <= line <= s[2]]
    return min(inside, key=lambda s: s[2] - s[1]) if inside else None


def _string_literals(text: str) -> list[tuple[str, int]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = parse_python(text)
        except (SyntaxError, ValueError):
            return []
    return [
        (n.value, n.lineno)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.strip()
    ]


_NAME_LITERAL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _name_literal_lines(literals: Sequence[tuple[str, int]]) -> frozenset[int]:
    """Lines whose string literals are all bare identifiers (``"_coord_names"`` in
    ``__slots__``, ``'linkcheck_anchors'`` in a setting's registration): such a
    literal names code, it is not a message the code prints, so a report that writes
    the name says no more about this line than about any line that uses it."""
    by_line: dict[int, list[str]] = defaultdict(list)
    for value, line in literals:
        by_line[line].append(value)
    return frozenset(n for n, vs in by_line.items() if all(_NAME_LITERAL.match(v) for v in vs))


def _whole(value: str, text: str) -> bool:
    """``value`` occurs in ``text`` as a whole: not inside a longer word or number
    ('0.00' is not in '50.00')."""
    pattern = r"(?<![\w.])" + re.escape(value) + r"(?![\w])"
    return re.search(pattern, text) is not None


def _assertion_text(report: str) -> str:
    """Both sides of every failing comparison, as one text to search literals in."""
    sides = [s for a in assertion_values(report) for s in (a.actual, a.expected)]
    return "\n".join(sides)


def _file_hits(
    path: str,
    text: str,
    ranked: RankedFile,
    spans: Sequence[tuple[str, int, int]],
    *,
    suspicious: Sequence[tuple[int, int, float]],
    called: Collection[str],
    tested: Collection[str],
    assertion_text: str,
    ids: ReportIdentifiers,
    docs: frozenset[int],
) -> list[_Hit]:
    lines = text.splitlines()
    n_lines = len(lines)
    hits: list[_Hit] = []
    def_lines = {first for _, first, _ in spans}
    literals = _string_literals(text)  # one parse for both uses below
    names = _name_literal_lines(literals)
    for ev in ranked.evidence:
        if ev.kind not in LINE_KINDS:
            continue
        w = DEFAULT_WEIGHTS.get(ev.kind, 0.5) * ev.strength
        label = _LINE_LABELS.get(ev.kind)
        for a, b in ev.lines:
            if ev.kind == "path" and a == b and a in def_lines:
                # a link to a function's def line points at the function, not that line
                hits.append(_Hit(a, w, ev.reason, False))
                continue
            for line in range(max(1, a), min(n_lines, b, a + 9) + 1):
                lw = w * NAME_LITERAL_FACTOR if ev.kind == "literal" and line in names else w
                hits.append(_Hit(line, lw, f"{label} at line {line}" if label else ev.reason))
    for ev in ranked.evidence:
        if ev.kind in SPAN_KINDS:
            w = DEFAULT_WEIGHTS.get(ev.kind, 0.5) * ev.strength
            hits += [_Hit(a, w, ev.reason, False) for a, _ in ev.lines if 1 <= a <= n_lines]
    for a, b, score in suspicious:
        for line in range(max(1, a), min(n_lines, b, a + 9) + 1):
            hits.append(
                _Hit(line, DEFAULT_WEIGHTS["sbfl"] * score, f"SBFL {score:.2f}, lines {a}-{b}")
            )
    for name, first, _ in spans:
        simple = name.rsplit(".", 1)[-1]
        if simple in called:
            hits.append(_Hit(first, 1.5, f"the failing assertion calls {simple}", False))
        if simple in tested:
            hits.append(_Hit(first, 1.0, f"a failing test is named for {simple}", False))
    if assertion_text:
        for value, line in dict(literals).items():
            v = value.strip()
            if len(v) >= 3 and _whole(v, assertion_text):
                # short literals ('git', 'open') are in many values by chance
                w = 0.25 + 0.5 * min(1.0, len(v) / 15)
                hits.append(_Hit(line, w, f"literal {v!r} appears in the failing assertion"))
    if spans:  # the weakest hint: with other evidence, a tie-breaker of one function
        if hits:
            hits += _word_hits(lines, spans, ids, docs, weight=WORD_TIEBREAK, top=1)
        else:
            hits += _word_hits(lines, spans, ids, docs, weight=0.5)
    return hits


def _word_hits(
    lines: Sequence[str],
    spans: Sequence[tuple[str, int, int]],
    ids: ReportIdentifiers,
    docs: frozenset[int],
    *,
    weight: float,
    top: int = 3,
) -> list[_Hit]:
    """The functions whose code uses the report's rarest identifiers
    (:func:`~fixbugs.localize.function_match.function_matches`): the best one at
    ``weight``, the next ones in proportion to their match."""
    matches = function_matches(lines, spans, ids, docs)[:top]
    if not matches:
        return []
    best = matches[0][1]
    hits = []
    for i, score in matches:
        name, first, _ = spans[i]
        why = f"{name} uses the report's identifiers"
        hits.append(_Hit(first, weight * score / best, why, False))
    return hits


def _tested_name(test_id: str) -> str:
    """``tests/x.py::TestA::test_get_new_command[p0]`` → ``get_new_command``."""
    name = TestId.parse(test_id).function
    return name.removeprefix("test_") if name.startswith("test_") else ""


def _lines_for(
    group: Sequence[_Hit],
    span: tuple[str, int, int] | None,
    n_lines: int,
    text_lines: Sequence[str] = (),
    ids: ReportIdentifiers | None = None,
    docs: frozenset[int] = frozenset(),
) -> tuple[int, int]:
    lo_bound, hi_bound = (span[1], span[2]) if span else (1, n_lines)
    if span and span[2] - span[1] + 1 <= MAX_REGION_LINES:
        return span[1], span[2]
    exact = [h for h in group if h.exact]
    if not exact:  # only whole-function evidence: its lines that say most of the report
        if ids is not None and text_lines:
            return best_lines(
                text_lines, lo_bound, hi_bound, ids, width=MAX_REGION_LINES, docs=docs
            )
        return lo_bound, min(hi_bound, lo_bound + MAX_REGION_LINES - 1)
    lines = [h.line for h in exact]
    lo, hi = min(lines), max(lines)
    if hi - lo + 1 > MAX_REGION_LINES:
        lo = hi = max(exact, key=lambda h: (h.weight, -h.line)).line
    # the window holds every hit; within that, the lines that say most of the report (a
    # fix is often a few lines off the line that shows the failure)
    first, last = max(lo_bound, hi - MAX_REGION_LINES + 1), min(lo, hi_bound - MAX_REGION_LINES + 1)
    if ids is not None and text_lines and first <= last:
        window = richest_window(
            text_lines, first, last + MAX_REGION_LINES - 1, ids,
            width=MAX_REGION_LINES, docs=docs, head=lo_bound,
        )  # fmt: skip
        if window is not None:
            return window
    lo = max(lo_bound, lo - (MAX_REGION_LINES - (hi - lo + 1)) // 2)
    hi = min(hi_bound, lo + MAX_REGION_LINES - 1)
    return max(lo_bound, hi - MAX_REGION_LINES + 1), hi


def region_at(
    path: str, text: str, lines: Sequence[int], reasons: tuple[str, ...], *, score: float = 0.0
) -> Region:
    """The region around ``lines`` of ``path``, shaped as every region is: the function
    enclosing the first of them (whole when short, else narrowed around them), or those
    lines of module-level code."""
    n_lines = max(1, len(text.splitlines()))
    spans = function_spans(text) if path.endswith(".py") else []
    span = _enclosing(spans, lines[0]) if lines else None
    group = [_Hit(n, 1.0, "") for n in lines if span is None or span[1] <= n <= span[2]]
    a, b = _lines_for(group, span, n_lines)
    return Region(path, span[0] if span else None, a, b, score, reasons)


def sbfl_ranges(
    line_scores: Mapping[str, Mapping[int, float]],
) -> dict[str, list[tuple[int, int, float]]]:
    """SBFL's per-line scores as (first, last, best score) ranges per file."""
    return {
        path: [
            (a, b, max(scores.get(i, 0.0) for i in range(a, b + 1)))
            for a, b in suspicious_ranges(dict(scores))
        ]
        for path, scores in line_scores.items()
    }


def suspicious_regions(
    files: Mapping[str, str],
    ranked: Sequence[RankedFile],
    *,
    report: str = "",
    suspicious: Mapping[str, Sequence[tuple[int, int, float]]] | None = None,
    test_ids: Sequence[str] = (),
    top_files: int = 5,
    per_file: int = 3,
    limit: int = 5,
) -> list[Region]:
    """The ``limit`` most suspicious regions of the ``top_files`` best-ranked files.

    ``report`` is read without its pytest warning entries and its environment
    listing, as the file ranking reads it
    (:func:`fixbugs.localize.report_text.evidence_text`).
    """
    report = evidence_text(report)
    called = set(called_names(report))
    tested = {_tested_name(t) for t in test_ids} - {""}
    assertion_text = _assertion_text(report)
    ids = ReportIdentifiers.of(report)
    regions: list[Region] = []
    for rf in ranked[:top_files]:
        text = files.get(rf.path)
        if text is None:
            continue
        text_lines = text.splitlines()
        n_lines = max(1, len(text_lines))
        spans = function_spans(text) if rf.path.endswith(".py") else []
        docs = docstring_lines(text) if spans else frozenset()
        hits = _file_hits(
            rf.path,
            text,
            rf,
            spans,
            suspicious=(suspicious or {}).get(rf.path, ()),
            called=called,
            tested=tested,
            assertion_text=assertion_text,
            ids=ids,
            docs=docs,
        )
        if not hits:
            a, b = best_lines(text_lines, 1, n_lines, ids, width=MAX_REGION_LINES, docs=docs)
            why = "no line-level evidence in this file; the lines richest in the report's words"
            regions.append(Region(rf.path, None, a, b, rf.score * 0.4, (*rf.reasons[:2], why)))
            continue
        groups: dict[tuple[str, int, int] | None, list[_Hit]] = defaultdict(list)
        for h in hits:
            groups[_enclosing(spans, h.line)].append(h)
        weight = {k: sum(h.weight for h in g) for k, g in groups.items()}
        top = max(weight.values())
        best = sorted(groups, key=lambda k: -weight[k])[:per_file]
        for key in best:
            group = groups[key]
            a, b = _lines_for(group, key, n_lines, text_lines, ids, docs)
            reasons = tuple(dict.fromkeys(h.reason for h in sorted(group, key=lambda h: -h.weight)))
            # the file's rank, shared by its regions in proportion to their evidence, plus
            # the region's strongest single piece of evidence: a line a link or a frame
            # names in the second file can beat a function the first file holds only by
            # name, and many weak hits (SBFL over a helper every test runs) add nothing
            strongest = max(h.weight for h in group)
            score = rf.score * (0.4 + 0.6 * weight[key] / top) + strongest
            regions.append(Region(rf.path, key[0] if key else None, a, b, score, reasons[:5]))
    regions.sort(key=lambda r: (-r.score, r.path, r.start))
    return regions[:limit]
