"""Merge evidence into one ranked list of files, each with its reasons.

A file's score is the weighted sum, over signal kinds, of its strongest
evidence of that kind. The weights encode how often each kind points at the
right file, strongest first: a traceback frame or a spectrum says where code
actually ran and failed; naming and imports say what the failing test
exercises; symbols and BM25 say what the report talks about.

Support files (documentation configuration, examples, the setup script;
:func:`fixbugs.index.paths.is_support_path`) count at :data:`SUPPORT_FACTOR`
unless the failure ran through them.

Model relevance is advisory. Its weight is low, and it only counts for files
that already have static evidence: a file no signal points at can never
rise on a model's say-so (the embedded 135M model is a weak judge).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from fixbugs.index import is_test_path
from fixbugs.index.paths import is_support_path
from fixbugs.localize.evidence import FileEvidence

__all__ = ["DEFAULT_WEIGHTS", "RankedFile", "rank_files"]

DEFAULT_WEIGHTS: Mapping[str, float] = {
    "traceback": 3.0,
    "path": 2.0,  # the report names the file by its path
    "quoted": 2.5,  # a source line the report quotes (a frame whose path was cut)
    "sbfl": 2.0,
    "command": 2.0,  # a module named like the command the user typed
    "naming": 2.0,
    "trace": 1.5,  # a span of the failing request names this file (code.filepath)
    "call": 2.0,  # a definition the report's code calls, resolved through the module graph
    "name": 1.5,  # a Class.method or dotted name the report writes
    "import": 1.0,
    "neighbour": 0.75,  # a function the report's code uses calls this one
    "symbol": 1.0,
    "literal": 1.25,  # a message or pattern of the code that the report shows
    "warning": 0.5,
    "bm25": 0.75,
    "model": 0.25,
}
_ADVISORY = frozenset({"model"})  # kinds that never create a candidate on their own
# kinds that say the code ran and failed: they rank a support file as any other
_RAN = frozenset({"traceback", "sbfl"})
SUPPORT_FACTOR = 0.3  # a support file's text matches reports without holding their bugs


@dataclass(frozen=True, slots=True)
class RankedFile:
    path: str
    score: float
    reasons: tuple[str, ...]
    lines: tuple[tuple[int, int], ...] = ()
    # every piece of evidence about this file, for line-level regions (fixbugs.localize.regions)
    evidence: tuple[FileEvidence, ...] = field(default=(), compare=False, repr=False)


def rank_files(
    evidence: Iterable[FileEvidence],
    *,
    weights: Mapping[str, float] = DEFAULT_WEIGHTS,
    include_tests: bool = False,
    limit: int | None = None,
) -> list[RankedFile]:
    """Files by descending score; ties broken by path for a stable order."""
    best: dict[str, dict[str, FileEvidence]] = defaultdict(dict)
    every: dict[str, list[FileEvidence]] = defaultdict(list)
    lines: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for ev in evidence:
        if not include_tests and is_test_path(ev.path):
            continue
        kinds = best[ev.path]
        every[ev.path].append(ev)
        if ev.kind not in kinds or ev.strength > kinds[ev.kind].strength:
            kinds[ev.kind] = ev
        if ev.kind in ("traceback", "sbfl", "quoted"):  # kinds that know the line
            lines[ev.path].extend(ev.lines)
    ranked: list[RankedFile] = []
    for path, kinds in best.items():
        static = sum(
            weights.get(k, 0.0) * e.strength for k, e in kinds.items() if k not in _ADVISORY
        )
        if static <= 0:
            continue  # invariant: advisory evidence alone never ranks a file
        if is_support_path(path) and not kinds.keys() & _RAN:
            static *= SUPPORT_FACTOR
        advisory = sum(weights.get(k, 0.0) * e.strength for k, e in kinds.items() if k in _ADVISORY)
        contrib = sorted(kinds.values(), key=lambda e: -weights.get(e.kind, 0.0) * e.strength)
        reasons = tuple(e.reason for e in contrib if weights.get(e.kind, 0.0) * e.strength > 0)
        ranked.append(
            RankedFile(
                path, round(static + advisory, 4), reasons, _merge(lines[path]), tuple(every[path])
            )
        )
    ranked.sort(key=lambda r: (-r.score, r.path))
    return ranked[:limit] if limit is not None else ranked


def _merge(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[list[int]] = []
    for a, b in sorted(set(ranges)):
        if out and a <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return tuple((a, b) for a, b in out)
