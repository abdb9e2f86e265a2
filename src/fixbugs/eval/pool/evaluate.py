"""``fixbugs eval --pool``: the whole pool run as a user would, resumably, on every core.

Each case runs in up to two modes through the one eval driver
(:func:`fixbugs.eval.run.run_eval`, with the as-user runner): ``test``,
with the report and the failing test given; and ``issue``, where the case
carries its user's own issue text, with ``issue.md`` as the report,
``repo-issue.tar.gz`` (the tree as it was, with only the tests of then) as
the tree and no test. The scorer then applies each patch to a fresh
extraction of ``repo.tar.gz`` and runs the case's failing tests and
``pass_to_pass`` in its venv: "accepted by the real tests" (whatever the
run's verdict; the row keeps the verdict and the patch), beside the
run's own "validated". Each case-mode's row is kept in the results folder
as it lands, so a stopped run resumes where it was (``--fresh`` reruns
all). The figures sit beside BM25 (ranked from the same report in the same
run) and beside the previous run's (:mod:`.figures`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from pydantic import TypeAdapter

from fixbugs.eval.case import AgentRunner, Case, ReproductionKind
from fixbugs.eval.pool.casefiles import VENVS
from fixbugs.eval.run import CaseResult, load_cases, run_eval
from fixbugs.pyenv.testenv import ensure_python_env

__all__ = [
    "MODES",
    "POOL_REPAIR_BUDGET_S",
    "POOL_RUN_TIMEOUT_S",
    "Mode",
    "PoolRow",
    "built_pool_of",
    "case_modes",
    "issue_mode",
    "pool_python_env",
    "run_pool",
]

Mode = Literal["test", "issue"]
MODES: tuple[Mode, ...] = ("test", "issue")

# meant to fit ~150 cases and ~100 issue texts, two at a time on 2 cores, in 3 hours;
# measured: BugsInPy 65 min, sympy 116 s a case (both modes, at --jobs 2), so the whole pool
# with sympy is about 3 hours (MEASUREMENTS)
POOL_REPAIR_BUDGET_S = 45.0
POOL_RUN_TIMEOUT_S = 600.0


@dataclass(frozen=True, slots=True)
class PoolRow:
    """One case in one mode, scored: what ``results/<id>.<mode>.json`` keeps."""

    case_id: str
    mode: Mode
    top1: bool
    top3: bool
    top5: bool
    region: bool
    bm25_top1: bool
    bm25_top3: bool
    bm25_top5: bool
    reproduction: ReproductionKind
    validated: bool  # the run's own verdict
    accepted: bool  # the real tests hold with the run's patch (any verdict), as the scorer ran them
    detail: str  # the scorer's one line
    wall_s: float
    notes: tuple[str, ...] = ()
    verdict: str = "no_fix"  # the run's verdict level, passes_tests included
    patch: str | None = None  # the run's patch, to read beside the real fix
    # each stage's wall (and the venv's set-up, the whole run): where a case's time went
    stage_s: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, case_id: str, mode: Mode, r: CaseResult) -> PoolRow:
        a, b = r.scores["agent"], r.scores["bm25"]
        return cls(
            case_id,
            mode,
            a.top1,
            a.top3,
            a.top5,
            r.region_hit,
            b.top1,
            b.top3,
            b.top5,
            r.reproduction_kind,
            r.agent_validated,
            r.gold_passes,
            r.validation_detail,
            r.stage_s.get("agent_total", 0.0),
            r.notes[-3:],
            r.verdict,
            r.patch,
            {k: round(v, 2) for k, v in r.stage_s.items()},
        )


_ROW = TypeAdapter(PoolRow)


def case_modes(case: Case) -> list[tuple[Mode, Case]]:
    """The case with its failing test given, and from its issue text alone where it has one."""
    issue = issue_mode(case)
    return [("test", case)] if issue is None else [("test", case), ("issue", issue)]


def issue_mode(case: Case) -> Case | None:
    """The case as its issue's reporter had it: the issue text as the report, no test
    command, the tree with only the tests of then; None where the case has no issue text."""
    issue, tree = case.dir / "issue.md", case.dir / "repo-issue.tar.gz"
    if not (issue.is_file() and tree.is_file()):
        return None
    return replace(
        case,
        report=issue.read_text(errors="replace"),
        report_file=issue,
        test_command="",
        archive=tree.name,
    )


def pool_python_env(pool: Path) -> Callable[[str, Sequence[str]], Path]:
    """The case venvs the pool's builder made (``<pool>/venvs``): requirements only, no
    coverage.py (the agent supplies its own, in process or as a user)."""

    def env(python: str, requirements: Sequence[str]) -> Path:
        return ensure_python_env(python, requirements, (), cache_dir=pool / VENVS)

    return env


def built_pool_of(folder: Path) -> Path | None:
    """The pool the builder made that holds ``folder``'s cases, or None.

    Its venvs hold each case's pins as it installed them (some frozen lists only
    install with ``--no-deps``), so an eval of its cases takes those, never a venv of
    its own from the same list. ``folder`` is the pool itself, or a folder of links
    to some of its cases (a subset picked for a run): then the one folder the cases
    lie in, where that is a pool. The links are the evaluator's own, not a case's."""
    if (folder / VENVS).is_dir():
        return folder
    homes = {c.resolve().parent for c in folder.iterdir() if c.is_dir()}
    if len(homes) == 1 and ((home := homes.pop()) / VENVS).is_dir():
        return home
    return None


def _result_file(results: Path, case_id: str, mode: Mode) -> Path:
    return results / f"{case_id}.{mode}.json"


def load_row(path: Path) -> PoolRow | None:
    """A kept row, or None when it is missing or unreadable (then it runs again)."""
    with contextlib.suppress(OSError, ValueError):
        return _ROW.validate_json(path.read_bytes())
    return None


async def run_pool(
    pool: Path,
    *,
    agent: AgentRunner,
    results: Path,
    jobs: int | None = None,
    fresh: bool = False,
    python_env: Callable[[str, Sequence[str]], Path] | None = None,
    on_row: Callable[[PoolRow, bool], None] | None = None,
    modes: Collection[Mode] = MODES,
) -> list[PoolRow]:
    """Every case-mode of the pool, ``jobs`` at a time (default: the core count); a row
    already in ``results`` is taken as it is unless ``fresh``. ``on_row(row, kept)``.
    ``modes`` leaves the other mode out: the issue texts alone take minutes, not hours,
    so a change to reproduction from the issue can be measured (and its spread) on its own."""
    # a case the builder is still writing sits in a dot-folder until it holds
    cases = [c for c in load_cases(pool) if not c.dir.name.startswith(".")]
    env = python_env or pool_python_env(pool)
    await asyncio.to_thread(lambda: results.mkdir(parents=True, exist_ok=True))
    gate = asyncio.Semaphore(max(1, jobs or os.cpu_count() or 1))

    async def one(mode: Mode, case: Case) -> PoolRow:
        path = _result_file(results, case.id, mode)
        kept = None if fresh else load_row(path)
        if kept is not None:
            if on_row:
                on_row(kept, True)
            return kept
        async with gate:
            (r,) = await run_eval([case], agent=agent, python_env=env)
        row = PoolRow.of(case.id, mode, r)
        tmp = path.with_suffix(".partial")
        tmp.write_bytes(_ROW.dump_json(row, indent=2))
        tmp.replace(path)
        if on_row:
            on_row(row, False)
        return row

    tasks = [one(mode, c) for case in cases for mode, c in case_modes(case) if mode in modes]
    return list(await asyncio.gather(*tasks))
