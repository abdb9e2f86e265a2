"""The driver of ``fixbugs eval``: run the agent over real-bug case folders and score it.

Each case (format: ``shared/bugs/README.md``) is extracted into a fresh temp
folder, its test environment prepared from ``case.json``, and the agent runs
on what a user would give it: the report, the tree and the test command. It
never sees ``gold.json``: only :mod:`fixbugs.eval.score` opens it, after the
agent is done. Two baselines (traceback frames only, BM25 only) are ranked
from the same inputs in the same run, so the comparison is side by side.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fixbugs.errors import InputError
from fixbugs.eval.archive import extract_tree
from fixbugs.eval.case import AgentRunner, Case, ReproductionKind
from fixbugs.eval.score import LocalizationScore  # at run time: CaseResult is read back typed
from fixbugs.index import IndexCache, index_texts
from fixbugs.inputs.walk import walk_text_files
from fixbugs.localize import RankedFile, bm25_baseline, traceback_baseline
from fixbugs.pyenv.testenv import ensure_python_env
from fixbugs.repair.verdict import VerdictLevel
from fixbugs.run.context import Models

__all__ = [
    "CaseResult",
    "EvalSummary",
    "load_cases",
    "read_tree",
    "run_eval",
]


@dataclass(frozen=True, slots=True)
class CaseResult:
    id: str
    agent: list[str]
    traceback_baseline: list[str]
    bm25_baseline: list[str]
    scores: dict[str, LocalizationScore]  # "agent" / "traceback" / "bm25" → its score
    reproduction_confirmed: bool | None
    # the run said "validated" and the case's own tests, redone from scratch, hold
    validated: bool
    validation_detail: str
    stage_s: dict[str, float]
    notes: tuple[str, ...]
    region_hit: bool = False  # the root cause: right file, lines within 3 of a gold hunk
    root_cause: tuple[str, int, int] | None = None
    degraded: bool = False
    sbfl_ran: bool = False
    stage_ttft_s: dict[str, float] = field(default_factory=dict)  # stages that streamed
    verdict: str = "no_fix"  # the run's verdict level (fixbugs.repair.verdict.VerdictLevel)
    gold_passes: bool = False  # the case's tests hold with the run's patch, whatever its verdict
    agent_validated: bool = False  # the run's own verdict (``validated`` is the scorer's)
    reproduction_kind: ReproductionKind = "none"
    patch: str | None = None  # the run's patch, whatever its verdict


@dataclass(frozen=True, slots=True)
class Shares:
    """Share of the cases with a gold file at rank ≤ k, and with a predicted range on a hunk."""

    top1: float
    top3: float
    top5: float
    line_hit: float


@dataclass(frozen=True, slots=True)
class StageTimes:
    mean: float
    median: float
    max: float


@dataclass(frozen=True, slots=True)
class EvalSummary:
    """The figures of one eval over its cases, as ``--json`` writes them under ``summary``."""

    cases: int
    localization: dict[str, Shares]  # "agent" / "traceback" / "bm25" → its shares
    reproduction_confirmed: int
    root_cause_region: float
    degraded: int
    validated_fixes: int  # the run said "validated" and the case's tests hold
    stage_s: dict[str, StageTimes]
    sbfl_ran: int = 0  # cases where SBFL gave evidence (reproduced, coverage scored lines)
    # time to the first streamed token, per stage, over the cases where the stage streamed
    ttft_s: dict[str, StageTimes] = field(default_factory=dict)
    # the run said "validated" but the case's tests do not hold: a wrong claim
    validated_wrong: int = 0
    # the run said "passes tests" (a check failed); of those, how many the case's tests pass
    passes_tests: int = 0
    passes_tests_gold: int = 0


def load_cases(cases: Path, *, case_id: str | None = None, limit: int | None = None) -> list[Case]:
    """Case folders under ``cases`` (or ``cases`` itself when it is one), sorted by id."""
    if not cases.is_dir():
        raise InputError(f"--cases {cases}: not a folder; give a folder of case folders")
    dirs = (
        [cases]
        if (cases / "case.json").exists()
        else sorted((d for d in cases.iterdir() if (d / "case.json").exists()), key=_case_order)
    )
    if case_id:
        dirs = [d for d in dirs if d.name == case_id]
        if not dirs:
            raise InputError(f"--case {case_id}: no such case folder under {cases}")
    if not dirs:
        raise InputError(f"--cases {cases}: no case folders (each needs case.json) found")
    out = []
    for d in dirs[:limit] if limit else dirs:
        try:
            meta = json.loads((d / "case.json").read_text())
            report = (d / "report.md").read_text()
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"case {d}: cannot read case.json/report.md ({exc})") from None
        out.append(
            Case(
                meta.get("id", d.name),
                d,
                report,
                meta.get("test_command", ""),  # SWE-bench issue cases have none
                str(meta.get("python", "3")),
                tuple(meta.get("requirements", ())),
            )
        )
    return out


def _case_order(d: Path) -> tuple[str, int]:
    head, _, num = d.name.rpartition("-")
    return (head, int(num)) if num.isdigit() else (d.name, 0)


def read_tree(root: Path) -> dict[str, str]:
    """Text files under ``root`` (relative path → text): the files the agent reads too
    (:func:`fixbugs.inputs.walk.walk_text_files`), so agent and baselines rank the same set."""
    out: dict[str, str] = {}
    for rel in walk_text_files(root):
        try:
            out[rel] = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return out


def _baselines(files: dict[str, str], report: str) -> tuple[list[RankedFile], list[RankedFile]]:
    """The traceback and BM25 baselines' rankings of a tree read before the agent ran.

    BM25 reads the tree's index from FixBugs' index cache, where the agent's
    run of the same tree left it: indexed here from nothing, a sympy tree took
    30 s of one core a case-mode, the event loop (and so the other jobs'
    bookkeeping) held all the while.
    """
    index = index_texts(files, cache=IndexCache.default(), workers=os.cpu_count() or 1)
    return traceback_baseline(files, report), bm25_baseline(index, report)


async def run_eval(
    cases: list[Case],
    *,
    agent: AgentRunner | None = None,
    models: Models | None = None,
    on_case: Callable[[CaseResult], None] | None = None,
    python_env: Callable[[str, Sequence[str]], Path] = ensure_python_env,
) -> list[CaseResult]:
    """Run every case in turn (the machine is small; cases run one at a time).

    ``python_env`` prepares a case's test interpreter and returns its bin dir.
    Without ``agent``, the agent's own stages run up to the root cause
    (``--localize-only``) with ``models``.
    """
    from fixbugs.eval.full_agent import full_agent
    from fixbugs.eval.score import load_gold, region_hit, score_localization, validate_patch

    run_agent = agent or full_agent(models, until="root_cause")
    results: list[CaseResult] = []
    for case in cases:
        t0 = time.monotonic()
        python_bin = python_env(case.python, case.requirements)
        setup_s = time.monotonic() - t0
        with tempfile.TemporaryDirectory(prefix=f"fixbugs-eval-{case.id}-") as tmp:
            tree = Path(tmp) / "repo"
            tree.mkdir()
            extract_tree(case.dir / case.archive, tree)
            files = read_tree(tree)
            t1 = time.monotonic()
            out = await run_agent(case, tree, python_bin)
            agent_s = time.monotonic() - t1
        tb, bm = await asyncio.to_thread(_baselines, files, case.report)
        # only now, with the agent done, does anything read the gold answer
        gold = load_gold(case.dir)
        lines = {r.path: r.lines for r in out.ranked if r.lines}
        scores = {
            "agent": score_localization([r.path for r in out.ranked], gold, lines),
            "traceback": score_localization([r.path for r in tb], gold),
            "bm25": score_localization([r.path for r in bm], gold),
        }
        val = await validate_patch(case.dir, out.patch, python_bin)
        said = "passes tests: " if out.verdict == VerdictLevel.PASSES_TESTS else ""
        res = CaseResult(
            case.id,
            [r.path for r in out.ranked[:10]],
            [r.path for r in tb[:10]],
            [r.path for r in bm[:10]],
            scores,
            out.reproduction_confirmed,
            val.validated and out.verdict == VerdictLevel.VALIDATED,
            said + val.detail,
            {"env_setup": setup_s, **out.stage_s, "agent_total": agent_s},
            out.notes,
            region_hit(out.root_cause, gold),
            out.root_cause,
            out.degraded,
            out.sbfl_ran,
            out.stage_ttft_s,
            out.verdict.value,
            val.validated,
            out.agent_validated,
            out.reproduction_kind,
            out.patch,
        )
        results.append(res)
        if on_case:
            on_case(res)
    return results


def summarize(results: list[CaseResult]) -> EvalSummary:
    n = len(results)

    def share(hits: Iterable[bool]) -> float:
        return sum(1 for hit in hits if hit) / n if n else 0.0

    def shares(who: str) -> Shares:
        scores = [r.scores[who] for r in results]
        return Shares(
            top1=share(s.top1 for s in scores),
            top3=share(s.top3 for s in scores),
            top5=share(s.top5 for s in scores),
            line_hit=share(s.line_hit for s in scores),
        )

    stages: dict[str, list[float]] = {}
    ttfts: dict[str, list[float]] = {}
    for r in results:
        for k, v in r.stage_s.items():
            stages.setdefault(k, []).append(v)
        for k, v in r.stage_ttft_s.items():
            ttfts.setdefault(k, []).append(v)

    def times(v: list[float]) -> StageTimes:
        return StageTimes(statistics.fmean(v), statistics.median(v), max(v))

    return EvalSummary(
        cases=n,
        localization={who: shares(who) for who in ("agent", "traceback", "bm25")},
        reproduction_confirmed=sum(1 for r in results if r.reproduction_confirmed),
        root_cause_region=share(r.region_hit for r in results),
        degraded=sum(1 for r in results if r.degraded),
        validated_fixes=sum(1 for r in results if r.validated),
        validated_wrong=sum(1 for r in results if r.verdict == "validated" and not r.gold_passes),
        passes_tests=sum(1 for r in results if r.verdict == "passes_tests"),
        passes_tests_gold=sum(1 for r in results if r.verdict == "passes_tests" and r.gold_passes),
        sbfl_ran=sum(1 for r in results if r.sbfl_ran),
        stage_s={k: times(v) for k, v in stages.items()},
        ttft_s={k: times(v) for k, v in ttfts.items()},
    )
