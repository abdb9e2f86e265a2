"""A case's real fix as edits: what a model that knows the answer would write.

The oracle model (:mod:`fixbugs.eval.oracle`) answers FixBugs' rewrite
request with the gold fix, in one of the three edit forms the fix stage
parses (:mod:`fixbugs.repair.edits`); which gold fixes the engine can
express at all is decided here too, by one stated rule
(:func:`expressible`), so the eval says for every case why it counts or not.
Only the evaluation reads a case's gold; the agent sees none of it.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from pathlib import Path

from fixbugs.diffs import (
    apply_to_text,
    diff_files,
    diff_hunks,
    file_header,
    hunk_header,
    make_diff,
    split_lines,
)
from fixbugs.eval.score import Gold, load_gold
from fixbugs.index import is_test_path
from fixbugs.inputs.archives import CASE_LIMITS, check_tar
from fixbugs.localize.regions import function_spans
from fixbugs.repair.edits import (
    EditFormat,
    EditRejected,
    FunctionRewrite,
    ModelEdit,
    ParsedEdits,
    SearchReplace,
    UnifiedDiff,
    apply_edits,
    parse_edits,
    render_edits,
)

__all__ = ["FORMATS", "Expressible", "GoldFix", "expressible", "gold_edits", "load_gold_fix"]

FORMATS: tuple[EditFormat, ...] = ("search_replace", "unified_diff", "function")
_MAX_FILE = 4 << 20


@dataclass(frozen=True, slots=True)
class GoldFix:
    """The gold fix of one case: each changed file's buggy and fixed text."""

    gold: Gold
    old: dict[str, str]  # path -> buggy text (None-free: only files the tree has)
    new: dict[str, str]  # path -> fixed text (the gold patch applied in memory)
    missing: tuple[str, ...]  # files the gold patch names that the buggy tree lacks


def _read_tree_files(tarball: Path, paths: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    with tarball.open("rb") as fh, tarfile.open(fileobj=fh, mode=check_tar(fh, CASE_LIMITS)) as tar:
        for m in tar.getmembers():
            name = m.name.removeprefix("./")
            if name in paths and m.isreg() and m.size <= _MAX_FILE:
                f = tar.extractfile(m)
                if f is not None:
                    out[name] = io.TextIOWrapper(f, encoding="utf-8", newline="").read()
    return out


def load_gold_fix(case_dir: Path) -> GoldFix:
    gold = load_gold(case_dir)
    named = set(diff_files(gold.patch)) | set(gold.files)
    old = _read_tree_files(case_dir / "repo.tar.gz", named)
    new: dict[str, str] = {}
    for path, text in old.items():
        fixed = apply_to_text(text, gold.patch, path, fuzz=0)
        if fixed is not None and fixed != text:
            new[path] = fixed
    return GoldFix(gold, old, new, tuple(sorted(named - set(old))))


@dataclass(frozen=True, slots=True)
class Expressible:
    ok: bool
    why: str
    one_function: bool = False  # every change inside one function of one file


def expressible(fix: GoldFix) -> Expressible:
    """Whether the engine can express the gold fix as a candidate, and why not.

    The rule: the fix changes only files the buggy tree has (no new, deleted
    or renamed file), none of them a test file (the engine never edits
    tests), its patch applies to them exactly, every changed Python file still
    parses, and the fix written as edits parses and applies back to exactly
    the fixed text in at least one form. ``one_function`` says whether it
    also stays inside one function of one file, the reach of a root-cause
    region (a rewrite outside the root cause is dropped at low trust).
    """
    g = fix.gold
    if fix.missing:
        return Expressible(False, f"the fix creates files the tree lacks: {', '.join(fix.missing)}")
    if "/dev/null" in {file_header(ln) for ln in g.patch.splitlines()}:
        return Expressible(False, "the fix deletes or creates a file")
    tests = sorted(p for p in fix.new if is_test_path(p))
    if tests:
        return Expressible(False, f"the fix edits test files: {', '.join(tests)}")
    if set(fix.new) != set(diff_files(g.patch)):
        return Expressible(False, "the gold patch does not apply exactly to the buggy tree")
    forms = []
    for form in FORMATS:
        try:
            _check(fix, gold_edits(fix, form))
            forms.append(form)
        except EditRejected:
            continue
    if not forms:
        return Expressible(False, "the fix written as edits does not apply back to the fixed text")
    hunks = [h for p in fix.new for h in diff_hunks(make_diff(p, fix.old[p], fix.new[p], 0))]
    one = len(fix.new) == 1 and _one_function(fix.old[hunks[0].path], hunks)
    where = "one function" if one else f"{len(hunks)} hunk(s) in {len(fix.new)} file(s)"
    return Expressible(True, f"{where}; as {', '.join(forms)}", one)


def _one_function(text: str, hunks: list) -> bool:  # type: ignore[type-arg]
    lo = min(min(h.start, h.end) for h in hunks)
    hi = max(max(h.start, h.end) for h in hunks)
    return any(first <= lo and hi <= last for _q, first, last in function_spans(text))


def _check(fix: GoldFix, parsed: ParsedEdits) -> None:
    out = apply_edits(parse_edits(render_edits(parsed.edits)), fix.old.get)
    if {f.path: f.new for f in out.files} != fix.new:
        raise EditRejected("the edits do not give the fixed text")


def gold_edits(fix: GoldFix, form: EditFormat) -> ParsedEdits:
    """The gold fix as edits in ``form``; :class:`EditRejected` when that form cannot say it."""
    edits: list[ModelEdit] = []
    for path in sorted(fix.new):
        old, new = fix.old[path], fix.new[path]
        if form == "unified_diff":
            edits.append(UnifiedDiff(path, make_diff(path, old, new)))
        elif form == "search_replace":
            edits += _search_replace(path, old, new)
        else:
            edits += _functions(path, old, new)
    return ParsedEdits(form, tuple(edits))


def _search_replace(path: str, old: str, new: str) -> list[SearchReplace]:
    """One block per hunk, with as much context as makes each SEARCH unique."""
    for context in (3, 5, 8, 13, 21):
        hunks: list[list[str]] = []
        for line in split_lines(make_diff(path, old, new, context))[2:]:  # past ---/+++
            if hunk_header(line) is not None:
                hunks.append([])
            elif hunks and line[:1] in (" ", "-", "+"):
                hunks[-1].append(line)
        blocks = [
            SearchReplace(
                path,
                "".join(ln[1:] for ln in h if ln[:1] != "+"),
                "".join(ln[1:] for ln in h if ln[:1] != "-"),
            )
            for h in hunks
        ]
        try:
            out = apply_edits(ParsedEdits("search_replace", tuple(blocks)), {path: old}.get)
        except EditRejected:
            continue
        if out.files[0].new == new:
            return blocks
    raise EditRejected(f"{path}: no unique SEARCH text for a hunk")


def _functions(path: str, old: str, new: str) -> list[FunctionRewrite]:
    """One rewrite per changed function; a change outside every function cannot be one."""
    old_spans, new_spans = function_spans(old), function_spans(new)
    names: list[str] = []
    for h in diff_hunks(make_diff(path, old, new, 0)):
        lo, hi = min(h.start, h.end), max(h.start, h.end)
        inside = [(first, q) for q, first, last in old_spans if first <= lo and hi <= last]
        if not inside:
            raise EditRejected(f"{path}:{h.start}: a change outside every function")
        name = max(inside)[1]  # the innermost
        if name not in names:
            names.append(name)
    lines = split_lines(new)
    out = []
    for name in names:
        found = [(first, last) for q, first, last in new_spans if q == name]
        if len(found) != 1:
            raise EditRejected(f"{path}: {name} is not one function after the fix")
        first, last = found[0]
        out.append(FunctionRewrite(path, name, "".join(lines[first - 1 : last])))
    return out
