"""Where the repair edits: regions of the repository, best first, each with a suspiciousness.

The root cause comes first, then what the root-cause stage weighed beside
it, the spectrum's best ranges, and the frames of the report's traceback
(:func:`repair_regions`). The fix stage adds what only the failing run and
the code itself tell (:func:`more_regions`): the lines whose literals the
run printed, the frames of the reproduction's own traceback (a report may
have pasted none), the functions the root cause delegates to (a bug
reported at a thin wrapper is often in the function it calls), and literal
lists of keys, on lines the failing tests ran, that lack the key the failed
assertion reads.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from fixbugs.index import is_test_path
from fixbugs.pyenv.raised import frames
from fixbugs.repair import SourceFile, printed_literal_lines
from fixbugs.repair.hints import repo_path
from fixbugs.repair.literals import key_edits
from fixbugs.run.record import BugRun, RootCause
from fixbugs.stages.model_scope import evidence_best

__all__ = [
    "Span",
    "callee_regions",
    "crash_regions",
    "fix_regions",
    "key_regions",
    "more_regions",
    "printed_regions",
    "repair_regions",
    "spectrum_top",
]

Span = tuple[str, int, int, float]  # (path, first line, last line, suspiciousness)

# a callee longer than this is a job of its own, not the delegate of a wrapper
_MAX_CALLEE_LINES = 40


def repair_regions(prior: BugRun, listed: Mapping[str, str]) -> list[tuple[str, int, int, float]]:
    """Regions in priority order with a suspiciousness: the root cause, the other regions
    the root-cause stage weighed, SBFL's top ranges, then the traceback's project frames."""
    regions: list[tuple[str, int, int, float]] = []

    def add(path: str, a: int, b: int, score: float) -> None:
        # only the repository's listed files: a path a test run named may be any
        if path not in listed or is_test_path(path):
            return
        if any(p == path and a == x and b == y for p, x, y, _ in regions):
            return
        regions.append((path, a, b, score))

    rc = prior.root_cause
    if rc is not None:
        add(rc.path, rc.start, rc.end, 1.0)
    # a judge that overruled the evidence does not demote the evidence's own best
    # region: both lead (a wrong judgment must not bury the right candidates)
    other = evidence_best(prior)
    if other is not None:
        add(*other, 1.0)
    # the other regions the root-cause stage weighed (function-level, with evidence)
    weighed = prior.regions
    top = max((r.score for r in weighed), default=0.0)
    for r in weighed[:5]:
        add(r.path, r.start, r.end, 0.9 * max(0.1, r.score / top) if top > 0 else 0.5)
    ranked = sorted(
        ((score, path, a, b) for path, rs in prior.sbfl.suspicious.items() for a, b, score in rs),
        key=lambda t: -t[0],
    )
    for score, path, a, b in ranked[:12]:
        add(path, a, b, max(0.05, min(1.0, score)))
    failure = prior.analysis.failure
    if failure is not None:
        for f in sorted(failure.project_frames(), key=lambda f: f.depth)[:4]:
            if f.path is not None:
                add(f.path, max(1, f.line - 2), f.line + 2, 0.6 / (1 + f.depth))
    return regions


def spectrum_top(
    prior: BugRun, listed: Mapping[str, str], *, limit: int = 2
) -> list[tuple[str, int, int, float]]:
    """The ranges holding the spectrum's best lines of all files (a tie may name several).

    SBFL's very best line is run by the failing tests far more than by
    passing ones; when the root cause is in another file, it is still where
    a fix is likeliest after the root cause, whatever the static rank.
    """
    ranges = [
        (path, a, b, score)
        for path, rs in prior.sbfl.suspicious.items()
        if path in listed and not is_test_path(path)
        for a, b, score in rs
    ]
    top = max((r[3] for r in ranges), default=0.0)
    if top <= 0.0:
        return []
    return [r for r in ranges if r[3] >= top * 0.999][:limit]


def printed_regions(
    prior: BugRun,
    regions: list[tuple[str, int, int, float]],
    repo_sources: list[SourceFile],
    run_text: str,
) -> list[tuple[str, int, int, float]]:
    """Lines of the likeliest files whose string literals the failing run printed.

    Only the files already suspected (the ranked files' top ten, the
    regions' files): a literal elsewhere that the output happens to hold is
    no evidence. A line already inside a region adds nothing.
    """
    wanted = {f.path for f in prior.ranked[:10]} | {r[0] for r in regions}
    trees = [(s.path, s.tree) for s in repo_sources if s.path in wanted and s.tree is not None]
    out: list[tuple[str, int, int, float]] = []
    for path, line in printed_literal_lines(trees, run_text):
        if any(p == path and a <= line <= b for p, a, b, _ in regions + out):
            continue
        out.append((path, max(1, line - 2), line + 2, 0.8))
    return out


def fix_regions(prior: BugRun, listed: Mapping[str, str]) -> list[tuple[str, int, int]]:
    """Localized regions in priority order (what a fix may touch, with slack)."""
    return [(p, a, b) for p, a, b, _ in repair_regions(prior, listed)]


def crash_regions(
    regions: list[Span], listed: Mapping[str, str], run_text: str, *, limit: int = 3
) -> list[Span]:
    """The failing run's own traceback: its crash line and the callers' lines, innermost
    first (the report's traceback, when it pasted one, is in :func:`repair_regions`)."""
    out: list[Span] = []
    for path, line in frames(run_text):
        own = repo_path(path, listed)
        if own is None or is_test_path(own):
            continue
        if any(p == own and a <= line <= b for p, a, b, _ in regions + out):
            continue
        out.append((own, max(1, line - 2), line + 2, 0.9 / (1 + 0.3 * len(out))))
        if len(out) >= limit:
            break
    return out


def _callees(tree: ast.Module, rc: RootCause) -> list[ast.FunctionDef]:
    """Functions of the same file that the root cause's lines call by name (``f(...)``,
    ``self.f(...)``), in the order of the calls."""
    defs: dict[str, ast.FunctionDef] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            defs.setdefault(node.name, node)
    calls = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call) and rc.start <= n.lineno <= rc.end),
        key=lambda n: (n.lineno, n.col_offset),
    )
    out: list[ast.FunctionDef] = []
    for node in calls:
        f = node.func
        name = None
        if isinstance(f, ast.Name):
            name = f.id
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            name = f.attr if f.value.id in ("self", "cls") else None
        d = defs.get(name) if name else None
        if d is not None and d not in out and not rc.start <= d.lineno <= rc.end:
            out.append(d)
    return out


def _delegates(tree: ast.Module, rc: RootCause) -> bool:
    """Whether the root cause is a thin wrapper: a function of at most three statements."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if not node.lineno <= rc.start <= rc.end <= (node.end_lineno or node.lineno):
            continue
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        compound = (ast.If, ast.For, ast.While, ast.Try, ast.With)
        if len(body) <= 3 and not any(isinstance(s, compound) for s in body):
            return True
    return False


def callee_regions(rc: RootCause, text: str, regions: list[Span], *, limit: int = 2) -> list[Span]:
    """The bodies of the functions the root cause calls in its own file (short ones only).

    A thin wrapper's callee weighs as the root cause itself: the wrapper has
    little code that could be wrong, what it delegates to has the rest.
    """
    src = SourceFile(rc.path, text)
    if src.tree is None:
        return []
    weight = 1.0 if _delegates(src.tree, rc) else 0.8
    out: list[Span] = []
    for d in _callees(src.tree, rc):
        end = d.end_lineno or d.lineno
        if end - d.lineno + 1 > _MAX_CALLEE_LINES:
            continue
        if any(p == rc.path and a <= d.lineno and end <= b for p, a, b, _ in regions):
            continue
        out.append((rc.path, d.lineno, end, weight))
        if len(out) >= limit:
            break
    return out


def key_regions(
    prior: BugRun,
    regions: list[Span],
    repo_sources: list[SourceFile],
    keys: tuple[str, ...],
    *,
    files: int = 3,
    limit: int = 4,
) -> list[Span]:
    """Literal lists of keys that lack a key the failing assertion reads, on lines the
    failing tests ran, in the likeliest files; each weighs as its line's spectrum score
    (the assertion names what the list lacks: evidence as direct as a crash line)."""
    if not keys:
        return []
    wanted = [f.path for f in prior.ranked[:files]]
    by_path = {s.path: s for s in repo_sources if s.path in wanted}
    found: list[Span] = []
    for path in wanted:
        src = by_path.get(path)
        ranges = prior.sbfl.spectrum.get(path, ()) or prior.sbfl.suspicious.get(path, ())
        if src is None or src.tree is None or not ranges:
            continue
        for e in key_edits(src, src.nodes_in(1, len(src.lines)), keys):
            score = max((sc for a, b, sc in ranges if a <= e.start <= b), default=0.0)
            if score <= 0.0 or any(p == path and a <= e.start <= b for p, a, b, _ in regions):
                continue
            if not any(f[0] == path and f[1] == e.start for f in found):
                found.append((path, e.start, e.end, min(1.0, score)))
    return sorted(found, key=lambda r: -r[3])[:limit]


def more_regions(
    prior: BugRun,
    regions: list[Span],
    listed: Mapping[str, str],
    repo_sources: list[SourceFile],
    run_text: str,
    root_text: str | None,
    keys: tuple[str, ...] = (),
) -> list[Span]:
    """What the fix stage adds to ``regions``: printed literals' lines, the failing run's
    frames, the root cause's callees (``root_text``: the root cause's file), and lists of
    keys that lack one the failing assertion reads (``keys``)."""
    out = printed_regions(prior, regions, repo_sources, run_text)
    out += crash_regions(regions + out, listed, run_text)
    out += key_regions(prior, regions + out, repo_sources, keys)
    rc = prior.root_cause
    if rc is not None and root_text is not None:
        out += callee_regions(rc, root_text, regions + out)
    return out
