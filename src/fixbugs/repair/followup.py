"""Stepwise repair: the next edit built on a candidate that moved the failure forward.

Pairs of the best single edits (:func:`fixbugs.repair.generate.pair_edits`)
rank after every single candidate, and the budget is spent before they
run. A bug that needs two or three edits tells more than that: the first
edit, run, fails *differently* (:func:`fixbugs.repair.stepping.progress`),
and that run's traceback says where the next edit goes. So each such
candidate (a *seed*) gets follow-ups: the repair templates run again on the
seed's text, at the new failure's frames and around the seed's own edit,
with the hints of the new run; each follow-up is the seed's edit and one
more, as one diff of the pristine file, validated like any candidate.

A fix proposes only what the bug needs: where the new edit does not touch
the seed's lines it is also tried alone (on the pristine file), queued just
before the pair, so a seed that was only a detour (it moved the failure,
and the second edit alone fixes the bug) never reaches the patch. Two
seeds may lead to the same second edit: its solo candidate is made once
and named again before the later pair, whose follow-ups may be urgent.

Bounded: a few seeds, a few follow-ups each, chains at most
``max_depth`` edits long; follow-ups of a weak sign interleave with the
candidates still waiting (:class:`fixbugs.repair.schedule.CandidateQueue`).
Only the seed's own file is edited again. Sans-IO: it reads texts and run
output, runs nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from dataclasses import replace

from fixbugs.diffs import changed_window
from fixbugs.index import is_test_path
from fixbugs.pyenv.raised import frames
from fixbugs.repair.generate import Region, generate_candidates
from fixbugs.repair.hints import FailureHints, parse_hints, repo_path
from fixbugs.repair.ingredients import IngredientIndex
from fixbugs.repair.ranking import RepairCandidate, to_candidate
from fixbugs.repair.schedule import FollowUps
from fixbugs.repair.source import Edit, SourceFile, parses
from fixbugs.repair.stepping import FailurePoint, progress

__all__ = ["Stepwise"]

# families that never seed or follow: a model's text, a pair (already two edits)
_NOT_STEPS = frozenset({"model", "pair"})


class Stepwise:
    """The follow-ups of one validation's seeds (see the module doc); call it per failed run.

    ``text_of`` gives a file's pristine text (None: not the repository's);
    ``baseline_output`` is the reproduction's failing run, which the first
    candidates are measured against.
    """

    def __init__(
        self,
        text_of: Callable[[str], str | None],
        baseline_output: str,
        *,
        listed: Collection[str],
        first_id: int,
        test_literals: frozenset[str] = frozenset(),
        max_seeds: int = 6,
        max_weak_seeds: int = 3,
        max_depth: int = 3,
        strong_limit: int = 12,
        weak_limit: int = 6,
    ) -> None:
        self._text_of = text_of
        self._listed = listed
        self._baseline = FailurePoint.parse(baseline_output)
        self._next_id = first_id
        self._test_literals = test_literals
        self._max_seeds, self._max_weak = max_seeds, max_weak_seeds
        self._max_depth = max_depth
        self._limits = {"strong": strong_limit, "weak": weak_limit}
        # invariant: a follow-up's id maps to the failure its seed left and its edit count
        self._parent: dict[int, tuple[FailurePoint, int]] = {}
        self._made: set[str] = set()
        # invariant: a second edit tried alone is one candidate, whichever seed made it first
        self._solo: dict[str, RepairCandidate] = {}
        self._seeds: list[tuple[int, str]] = []  # (candidate id, "strong" | "weak")
        # validation calls it from worker threads: one call at a time keeps ids unique
        self._lock = threading.Lock()

    def __call__(self, seed: RepairCandidate, output: str) -> FollowUps | None:
        """Follow-ups of ``seed``, whose failing tests still fail with ``output``; None when
        its failure did not move forward or the bounds are reached."""
        with self._lock:
            return self._follow_ups(seed, output)

    def _follow_ups(self, seed: RepairCandidate, output: str) -> FollowUps | None:
        before, depth = self._parent.get(seed.id, (self._baseline, 1))
        if seed.template in _NOT_STEPS or not seed.own or seed.overfit_risk == "high":
            return None
        if depth >= self._max_depth or len(self._seeds) >= self._max_seeds:
            return None
        after = FailurePoint.parse(output)
        sign = progress(before, after)
        if sign is None:
            return None
        if sign == "weak" and sum(1 for _, s in self._seeds if s == "weak") >= self._max_weak:
            return None
        pristine = self._text_of(seed.path)
        if pristine is None or not seed.new_text:
            return None
        steps = self._steps(seed, pristine, output, self._limits[sign])
        if not steps:
            return None
        self._seeds.append((seed.id, sign))
        for c in steps:  # a second edit tried alone is one edit on the pristine file
            if c.template == "stepwise":
                self._parent[c.id] = (after, depth + 1)
        return FollowUps(tuple(steps), urgent=sign == "strong")

    def _regions(self, seed: RepairCandidate, pristine: str, output: str) -> list[Region]:
        """The new failure's frames in the seed's file, innermost first, then the seed's edit."""
        out: list[Region] = []
        for path, line in frames(output):
            own = repo_path(path, self._listed)
            if own != seed.path or is_test_path(own):
                continue
            out.append(Region(own, max(1, line - 2), line + 2, 1.0 / (1 + 0.25 * len(out))))
            if len(out) >= 3:
                break
        grown = seed.new_text.count("\n") - pristine.count("\n")
        out.append(Region(seed.path, max(1, seed.start - 3), seed.end + 3 + max(0, grown), 0.9))
        return out

    def _steps(
        self, seed: RepairCandidate, pristine: str, output: str, limit: int
    ) -> list[RepairCandidate]:
        text = seed.new_text
        hints = parse_hints(output)
        cands = generate_candidates(
            self._regions(seed, pristine, output),
            {seed.path: text},
            hints,
            ingredients=IngredientIndex.of_sources([SourceFile(seed.path, text)]),
            test_literals=self._test_literals,
            pairs=0,
            per_region=60,
        )
        out: list[RepairCandidate] = []
        both = 0  # follow-ups holding the seed's edit and one more
        for c in cands:
            if c.template in _NOT_STEPS or c.overfit_risk == "high" or c.shape is not None:
                continue
            if c.new_text in (pristine, text) or c.new_text in self._made:
                continue
            risky = "possible" in (c.overfit_risk, seed.overfit_risk)
            edit = Edit(
                seed.path,
                min(seed.start, c.start),
                max(seed.end, c.end),
                c.new_text,
                "stepwise",
                f"{seed.why}; then {c.why}",
                risk="possible" if risky else "low",
            )
            step = to_candidate(
                self._next_id, edit, pristine, seed.suspiciousness, self._test_literals
            )
            if step.overfit_risk == "high":
                continue
            alone = _alone(pristine, text, c.new_text)
            made = self._solo.get(alone[0]) if alone is not None else None
            if made is not None:
                # another seed's follow-up made it: it goes again just before this pair (the
                # queue takes it once, at its earliest place), so a pair queued urgently
                # never runs ahead of the one edit that may be enough
                out.append(made)
            elif alone is not None and alone[0] not in self._made and parses(alone[0]):
                # the second edit by itself first: it wins, by order, if it is enough
                solo = self._on_pristine(seed.path, pristine, alone, hints) or Edit(
                    seed.path, alone[1], alone[2], alone[0], c.template, c.why, risk=c.overfit_risk
                )
                first = to_candidate(
                    self._next_id, solo, pristine, seed.suspiciousness, self._test_literals
                )
                if first.overfit_risk != "high":
                    self._made.add(alone[0])
                    self._solo[alone[0]] = first
                    self._next_id += 1
                    out.append(first)
            self._made.add(c.new_text)
            step = replace(step, id=self._next_id)
            self._next_id += 1
            out.append(step)
            both += 1
            if both >= limit:
                break
        return out

    def _on_pristine(
        self, path: str, pristine: str, alone: tuple[str, int, int], hints: FailureHints
    ) -> Edit | None:
        """The template's own edit of the pristine file that makes ``alone``'s text, so its
        description names the pristine file's lines (None: no template makes it there)."""
        text, a, b = alone
        region = Region(path, max(1, a - 3), b + 3, 1.0)
        for c in generate_candidates([region], {path: pristine}, hints, pairs=0):
            if c.new_text == text:
                return Edit(path, c.start, c.end, text, c.template, c.why, risk=c.overfit_risk)
        return None


def _alone(pristine: str, seed_text: str, step_text: str) -> tuple[str, int, int] | None:
    """The follow-up's own change (``seed_text`` -> ``step_text``) made to ``pristine``
    instead, with the pristine lines it replaces (1-based, first and last); None where it
    touches the lines the seed changed (then only both together are one fix).
    """
    p, t, u = (x.splitlines(keepends=True) for x in (pristine, seed_text, step_text))
    lo_s, p_hi, t_hi = changed_window(p, t)  # the seed: p[lo_s:p_hi] -> t[lo_s:t_hi]
    lo_c, c_hi, u_hi = changed_window(t, u)  # the step: t[lo_c:c_hi] -> u[lo_c:u_hi]
    if c_hi <= lo_s:  # before the seed's lines: the same place in the pristine file
        d = 0
    elif lo_c >= t_hi:  # after them: shifted by the lines the seed added or removed
        d = t_hi - p_hi
    else:
        return None
    a, b = lo_c - d, c_hi - d
    return "".join(p[:a] + u[lo_c:u_hi] + p[b:]), a + 1, max(a + 1, b)
