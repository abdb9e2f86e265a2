"""Candidate generation at the top suspicious regions: templates, ingredients, pairs.

For each region (root cause first, then the next SBFL or traceback regions)
every template family and the ingredient search propose edits; duplicates
and edits that do not parse are dropped here, before anything runs. Pairs of
two single edits in one file come last, for bugs one edit cannot fix.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from fixbugs.diffs import changed_window
from fixbugs.repair.hints import FailureHints
from fixbugs.repair.ingredients import IngredientIndex, ingredient_edits
from fixbugs.repair.literals import key_edits, literal_edits, regex_edits
from fixbugs.repair.ranking import RepairCandidate, rank, to_candidate
from fixbugs.repair.simplify import (
    fallback_edits,
    index_slice_edits,
    local_constant_edits,
    prefix_slice_edits,
    split_empty_edits,
    unwrap_edits,
)
from fixbugs.repair.source import Edit, SourceFile, parses
from fixbugs.repair.statements import delete_edits, guard_edits, none_item_edits, try_edits
from fixbugs.repair.templates import (
    argument_edits,
    condition_edits,
    constant_edits,
    membership_edits,
    operator_edits,
    return_edits,
)
from fixbugs.repair.variables import name_edits, swap_edits

__all__ = ["Region", "generate_candidates", "pair_edits", "region_edits"]


_CAPS = {
    "name": 30,
    "swap": 16,
    "literal_drop": 12,
    "delete": 8,
    "return": 12,
    "ingredient_const": 8,
    "unwrap": 12,
    "fallback": 4,
}


@dataclass(frozen=True, slots=True)
class Region:
    path: str
    start: int
    end: int
    suspiciousness: float


def _extra_conditions(src: SourceFile, lo: int, hi: int) -> list[str]:
    """Boolean tests written elsewhere in the file: candidates for an added conjunct."""
    if src.tree is None:
        return []
    out: dict[str, None] = {}
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Compare) and node.lineno == node.end_lineno:
            if lo <= node.lineno <= hi:
                continue
            text = src.segment(node)
            if len(text) <= 60:
                out.setdefault(text, None)
    return list(out)[:6]


def region_edits(
    src: SourceFile,
    region: Region,
    hints: FailureHints,
    index: IngredientIndex | None,
    attrs: dict[str, set[str]],
) -> Iterator[Edit]:
    """Every template and ingredient edit for one region of ``src``."""
    lo, hi = region.start, region.end
    nodes = src.nodes_in(lo, hi)
    stmts = src.statements_touching(lo, hi)
    simple = [s for s in stmts if s.lineno >= lo]
    failing = [
        s for s in stmts
        if any(p.endswith(src.path) and s.lineno <= ln <= (s.end_lineno or s.lineno)
               for p, ln in hints.locations)
    ]  # fmt: skip
    wanted = hints.wanted_tokens(src.text)
    yield from literal_edits(src, nodes, wanted)
    yield from regex_edits(src, nodes)
    yield from key_edits(src, nodes, hints.keys)
    yield from index_slice_edits(src, nodes, hints.exceptions)
    yield from prefix_slice_edits(src, nodes)
    yield from try_edits(src, failing or simple, hints.exceptions)
    yield from guard_edits(src, failing or simple)
    yield from split_empty_edits(src, nodes)
    if hints.saw_none:
        yield from none_item_edits(src, nodes)
    yield from condition_edits(src, nodes, _extra_conditions(src, lo, hi))
    yield from membership_edits(src, nodes)
    yield from operator_edits(src, nodes)
    if index is not None:
        yield from ingredient_edits(src, nodes, index)
    yield from argument_edits(src, nodes)
    yield from name_edits(src, nodes, attrs)
    yield from swap_edits(src, nodes)
    yield from constant_edits(src, nodes)
    yield from local_constant_edits(src, nodes)
    yield from unwrap_edits(src, nodes)
    yield from fallback_edits(src, simple)
    yield from return_edits(src, nodes)
    yield from delete_edits(src, simple)


def _line_change(old: str, new: str) -> tuple[int, int, list[str]] | None:
    """The one old line range an edit replaces, and its new lines (None if several)."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    lo, a_hi, b_hi = changed_window(a, b)
    matcher = difflib.SequenceMatcher(None, a[lo:a_hi], b[lo:b_hi], autojunk=False)
    ops = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not ops:
        return None
    i1, i2 = ops[0][1] + lo, ops[-1][2] + lo
    j1, j2 = ops[0][3] + lo, ops[-1][4] + lo
    return i1, i2, b[j1:j2]


def pair_edits(
    src: SourceFile, singles: list[RepairCandidate], *, limit: int
) -> Iterator[tuple[RepairCandidate, RepairCandidate, str]]:
    """Two single edits of one file on disjoint lines, applied together.

    A pair is checked as its singles were (:meth:`SourceFile.parses_with_all`:
    the functions it changes, not the whole file), so a large file's pairs do
    not each cost a whole-file parse.
    """
    old = src.text
    changes = []
    for c in singles:
        ch = _line_change(old, c.new_text)
        if ch is not None:
            changes.append((c, ch))
    made = 0
    lines = src.lines
    starts = src.line_starts
    for i, (c1, (a1, b1, n1)) in enumerate(changes):
        for c2, (a2, b2, n2) in changes[i + 1 :]:
            if made >= limit:
                return
            if not (b1 <= a2 or b2 <= a1) or (a1 == a2 and b1 == b2):
                continue
            (x1, y1, m1), (x2, y2, m2) = sorted(((a1, b1, n1), (a2, b2, n2)))
            spans = ((starts[x1], starts[y1], "".join(m1)), (starts[x2], starts[y2], "".join(m2)))
            if src.parses_with_all(spans):
                made += 1
                yield c1, c2, "".join(lines[:x1] + m1 + lines[y1:x2] + m2 + lines[y2:])


def _pair_pool(cands: list[RepairCandidate], top: int = 10) -> list[RepairCandidate]:
    """The best singles, plus both halves of any swap (`a -> b` with `b -> a`)."""
    pool = list(cands[:top])
    whys = {c.why: c for c in cands if c.template == "name"}
    for why, c in whys.items():
        parts = why.split(" -> ")
        if len(parts) == 2 and f"{parts[1]} -> {parts[0]}" in whys and c not in pool:
            pool.insert(0, c)
    return pool


def generate_candidates(
    regions: Iterable[Region],
    texts: dict[str, str],
    hints: FailureHints,
    *,
    ingredients: IngredientIndex | None = None,
    test_literals: frozenset[str] = frozenset(),
    extra: Iterable[tuple[Edit, float]] = (),
    hot_lines: Iterable[tuple[str, int]] = (),
    per_region: int = 150,
    pairs: int = 40,
) -> list[RepairCandidate]:
    """Ranked single-edit candidates, then pairs of the best singles per file.

    ``hot_lines`` are (path, line) pairs the spectrum ranks highest of all:
    an edit on one weighs like an edit on the line a traceback crashed on.
    """
    attrs = ingredients.attributes if ingredients is not None else {}
    hot = set(hot_lines)
    seen: dict[str, int] = {}  # new text -> its index in singles
    singles: list[RepairCandidate] = []

    def add(edit: Edit, susp: float) -> bool:
        old = texts[edit.path]
        if edit.new_text == old:
            return False
        at = seen.get(edit.new_text)
        if at is not None:
            # the same template edit from a more suspicious region weighs as that
            # region's (a model's edit keeps the weight its caller gave it)
            if singles[at].template != "model" and susp > singles[at].suspiciousness:
                singles[at] = replace(singles[at], suspiciousness=susp)
            return False
        seen[edit.new_text] = len(singles)
        singles.append(to_candidate(len(singles), edit, old, susp, test_literals))
        return True

    for edit, susp in extra:
        if edit.path in texts and parses(edit.new_text):
            add(edit, susp)
    parsed: dict[str, SourceFile] = {}  # a file's regions share its parse
    for region in regions:
        if region.path not in texts:
            continue
        src = parsed.get(region.path) or SourceFile(region.path, texts[region.path])
        parsed[region.path] = src
        if src.tree is None:
            continue
        n = 0
        crash = {ln for p, ln in hints.locations if p.endswith(region.path)}
        crash |= {ln for p, ln in hot if p == region.path}
        per_template: dict[str, int] = {}
        for edit in region_edits(src, region, hints, ingredients, attrs):
            # no family may flood a region (a long function has many names)
            per_template[edit.template] = per_template.get(edit.template, 0) + 1
            if per_template[edit.template] > _CAPS.get(edit.template, per_region):
                continue
            # the line a traceback crashed on (or the spectrum's top line) is the likeliest
            at_crash = any(edit.start <= ln <= edit.end for ln in crash)
            susp = region.suspiciousness * (1.5 if at_crash else 1.0)
            if hints.saw_empty and edit.template == "empty_split":
                susp *= 1.5  # the exception names the empty string this edit skips
            if hints.got_nothing and edit.template == "regex_loosen":
                susp *= 1.5  # nothing came back where a match was expected
            if edit.template == "literal" and edit.literals:
                # a literal that is a prefix of a word the expected value holds (and the
                # code lacks) points at the faulty line itself, whatever the region's rank
                susp = max(susp, 1.0)
            if add(edit, susp):
                n += 1
                if n >= per_region:
                    break
    ranked = rank(singles)
    out = [c for c in ranked if c.overfit_risk != "high"]
    by_file: dict[str, list[RepairCandidate]] = {}
    for c in ranked:
        if c.overfit_risk != "high" and c.template != "model":
            by_file.setdefault(c.path, []).append(c)
    next_id = len(singles)
    made = set(seen)
    for path, cands in by_file.items():
        src = parsed.get(path) or SourceFile(path, texts[path])
        for c1, c2, new in pair_edits(src, _pair_pool(cands), limit=pairs):
            if new in made:
                continue
            made.add(new)
            e = Edit(path, min(c1.start, c2.start), max(c1.end, c2.end), new, "pair",
                     f"{c1.why}; and {c2.why}")  # fmt: skip
            c = to_candidate(
                next_id, e, texts[path], max(c1.suspiciousness, c2.suspiciousness), test_literals
            )
            next_id += 1
            out.append(c)
    # high overfitting risk goes last of all, after the pairs
    return out + [c for c in ranked if c.overfit_risk == "high"]
