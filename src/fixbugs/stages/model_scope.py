"""Where the model's rewrite may change the code, and where it ranks: the judge's trust.

The rewrite is text FixBugs did not write, from the endpoint behind the
judge role (:attr:`fixbugs.run.context.Models.judge_trust`):

* low (the embedded model): every hunk stays inside the root cause, give or
  take ``slack`` lines; a rewrite that wanders is dropped, and it ranks
  with the engine's candidates by its score;
* high (a configured endpoint unless set low): it must rewrite the root
  cause (a hunk touches it, give or take ``slack``), or the evidence's own
  best region where the judge chose another (:func:`rewrite_roots`: a wrong
  judgment must not also throw away a right rewrite), and may edit other
  hunks and files besides, in files of the repository's listing, never a
  test file (the tests are validation's oracle); it leads the candidates,
  unless its change has an overfitting shape (swallows the exception,
  negates a whole condition, returns a constant): a strong model's
  word does not make such a change a fix.

The fix stage applies this before anything runs, and validation once more
before a fork is made: one rule for both.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from agentrt import Trust
from fixbugs.diffs import Hunk
from fixbugs.index import is_test_path
from fixbugs.repair import RepairCandidate
from fixbugs.run.record import BugRun

__all__ = ["evidence_best", "model_first", "rewrite_refusal", "rewrite_roots"]

Place = tuple[str, int, int]  # path, first and last line


def evidence_best(prior: BugRun) -> Place | None:
    """The evidence's best region when the judge chose another one as the root cause."""
    rc = prior.root_cause
    if rc is None or rc.origin != "model" or not prior.regions:
        return None
    best = prior.regions[0]
    if (best.path, best.start, best.end) == (rc.path, rc.start, rc.end):
        return None
    return best.path, best.start, best.end


def rewrite_roots(prior: BugRun) -> list[Place]:
    """Where a high-trust rewrite may stand: the root cause, and the evidence's best region
    where the judge overruled it."""
    rc = prior.root_cause
    if rc is None:
        return []
    other = evidence_best(prior)
    return [(rc.path, rc.start, rc.end), *([other] if other else [])]


def _where(hunks: Sequence[Hunk]) -> str:
    return ", ".join(f"{h.path}:{h.start}-{h.end}" for h in hunks)[:200]


def rewrite_refusal(
    hunks: Sequence[Hunk],
    roots: Sequence[Place],
    trust: Trust,
    listed: Collection[str],
    slack: int,
) -> str | None:
    """Why the model's rewrite (its ``hunks``) may not stand, or None when it may.

    ``roots`` starts with the root cause (path, first and last line); under
    high trust a hunk may touch any of them (:func:`rewrite_roots`). ``listed``
    is the repository's files.
    """
    if not hunks:
        return "it changes nothing"
    path, start, end = roots[0]
    if trust == "low":
        out = [h for h in hunks if not h.within(path, start, end, slack)]
        return f"its edit of {_where(out)} is outside the root cause" if out else None
    tests = [h for h in hunks if is_test_path(h.path)]
    if tests:
        return f"it edits a test file ({_where(tests)})"
    unknown = [h for h in hunks if h.path not in listed]
    if unknown:
        return f"it edits a file the repository does not have ({_where(unknown)})"
    if not any(h.touches(p, a, b, slack) for h in hunks for p, a, b in roots):
        return f"it does not rewrite the root cause {path}:{start}-{end} ({_where(hunks)})"
    return None


def model_first(cands: Sequence[RepairCandidate], trust: Trust) -> list[RepairCandidate]:
    """``cands`` (ranked) with, under high trust, the model's rewrite first.

    Only a rewrite without an overfitting shape or high risk is moved: one
    with them keeps the place the ranking gave it (after every other).
    """
    if trust != "high":
        return list(cands)
    lead = [c for c in cands if c.template == "model" and c.overfit_risk != "high"]
    ids = {c.id for c in lead}
    return [*lead, *(c for c in cands if c.id not in ids)]
