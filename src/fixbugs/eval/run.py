"""``fixbugs eval``: run the agent over real-bug case folders and score it.

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
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fixbugs.errors import InputError
from fixbugs.eval.archive import extract_tree
from fixbugs.eval.case import AgentRunner, Case, ReproductionKind
from fixbugs.inputs.inert import terminal
from fixbugs.inputs.walk import walk_text_files
from fixbugs.localize import bm25_baseline, traceback_baseline
from fixbugs.pyenv.testenv import ensure_python_env
from fixbugs.run.context import Models
from fixbugs.run.model_steps import ModelStepsOption

if TYPE_CHECKING:
    from fixbugs.eval.score import LocalizationScore
    from fixbugs.run.model_steps import ModelSteps
    from fixbugs.stages.driver import StageName

__all__ = [
    "CaseResult",
    "EvalSummary",
    "eval_command",
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
    validated: bool
    validation_detail: str
    stage_s: dict[str, float]
    notes: tuple[str, ...]
    region_hit: bool = False  # the root cause: right file, lines within 3 of a gold hunk
    root_cause: tuple[str, int, int] | None = None
    degraded: bool = False
    sbfl_ran: bool = False
    stage_ttft_s: dict[str, float] = field(default_factory=dict)  # stages that streamed
    agent_validated: bool = False  # the run's own verdict (``validated`` is the scorer's)
    reproduction_kind: ReproductionKind = "none"


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
    validated_fixes: int
    stage_s: dict[str, StageTimes]
    sbfl_ran: int = 0  # cases where SBFL gave evidence (reproduced, coverage scored lines)
    # time to the first streamed token, per stage, over the cases where the stage streamed
    ttft_s: dict[str, StageTimes] = field(default_factory=dict)


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
            tb = traceback_baseline(files, case.report)
            bm = bm25_baseline(files, case.report)
            t1 = time.monotonic()
            out = await run_agent(case, tree, python_bin)
            agent_s = time.monotonic() - t1
        # only now, with the agent done, does anything read the gold answer
        gold = load_gold(case.dir)
        lines = {r.path: r.lines for r in out.ranked if r.lines}
        scores = {
            "agent": score_localization([r.path for r in out.ranked], gold, lines),
            "traceback": score_localization([r.path for r in tb], gold),
            "bm25": score_localization([r.path for r in bm], gold),
        }
        val = await validate_patch(case.dir, out.patch, python_bin)
        res = CaseResult(
            case.id,
            [r.path for r in out.ranked[:10]],
            [r.path for r in tb[:10]],
            [r.path for r in bm[:10]],
            scores,
            out.reproduction_confirmed,
            val.validated,
            val.detail,
            {"env_setup": setup_s, **out.stage_s, "agent_total": agent_s},
            out.notes,
            region_hit(out.root_cause, gold),
            out.root_cause,
            out.degraded,
            out.sbfl_ran,
            out.stage_ttft_s,
            out.agent_validated,
            out.reproduction_kind,
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
        sbfl_ran=sum(1 for r in results if r.sbfl_ran),
        stage_s={k: times(v) for k, v in stages.items()},
        ttft_s={k: times(v) for k, v in ttfts.items()},
    )


def _print_summary(summary: EvalSummary) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    n = summary.cases
    table = Table(
        title=f"Localization over {n} cases (share of cases with a gold file at rank ≤ k)"
    )
    for col in ("ranker", "top-1", "top-3", "top-5", "line hit"):
        table.add_column(col)
    names = {"agent": "agent", "traceback": "baseline: traceback frames", "bm25": "baseline: BM25"}
    for who, label in names.items():
        s = summary.localization[who]
        table.add_row(label, *(f"{v:.0%}" for v in (s.top1, s.top3, s.top5, s.line_hit)))
    console.print(table)
    console.print(
        f"reproduction confirmed: {summary.reproduction_confirmed}/{n}   "
        f"root-cause region (gold file, within 3 lines of a gold hunk): "
        f"{summary.root_cause_region:.0%}   "
        f"validated fixes: {summary.validated_fixes}/{n}   SBFL ran: {summary.sbfl_ran}/{n}"
    )
    st = Table(title="Per-stage wall time (s), and TTFT of the stages that streamed a model call")
    for col in ("stage", "mean", "median", "max", "TTFT mean", "TTFT max"):
        st.add_column(col)
    for k, v in summary.stage_s.items():
        t = summary.ttft_s.get(k)
        ttft = (f"{t.mean:.2f}", f"{t.max:.2f}") if t else ("-", "-")
        st.add_row(k, f"{v.mean:.2f}", f"{v.median:.2f}", f"{v.max:.2f}", *ttft)
    console.print(st)


def eval_command(
    cases: Annotated[
        Path | None,
        typer.Option(
            help="A folder of case folders (or one case folder); with --pool, the pool "
            "(default ~/.cache/fixbugs/pool)."
        ),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write results as JSON here.")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="Run only the first N cases.")] = None,
    case: Annotated[str | None, typer.Option("--case", help="Run only this case id.")] = None,
    config: Annotated[
        Path | None, typer.Option(help="agentrt config TOML (endpoints, roles).")
    ] = None,
    no_model: Annotated[bool, typer.Option("--no-model", help="Static signals only.")] = False,
    localize_only: Annotated[
        bool, typer.Option(help="Only reproduce and localize (no root cause, fix, validation).")
    ] = False,
    as_user: Annotated[
        bool,
        typer.Option(
            "--as-user",
            help="Run `fixbugs run` per case as a user would: the case venv activated "
            "(VIRTUAL_ENV, PATH), nothing else from the eval.",
        ),
    ] = False,
    reports: Annotated[
        Path | None,
        typer.Option(
            "--reports",
            help="A folder of <case-id>.md reports that replace each case's report.md "
            "(user-style reports: eval/reports).",
        ),
    ] = None,
    no_test: Annotated[
        bool,
        typer.Option("--no-test", help="Give the agent no test command, as most users do not."),
    ] = False,
    repair_budget: Annotated[
        float | None,
        typer.Option(
            min=1, help="Seconds each case's repair engine may spend starting candidates."
        ),
    ] = None,
    model_steps: ModelStepsOption = None,
    oracle: Annotated[
        bool,
        typer.Option(
            "--oracle",
            help="Point the models at an oracle that answers from each case's gold "
            "(served on loopback for the run): the proof that right answers become fixes.",
        ),
    ] = False,
    oracle_noise: Annotated[
        bool,
        typer.Option(
            "--oracle-noise",
            help="With --oracle: 30% of answers about a wrong file, 10% malformed, "
            "20 s (real) before each answer's first token.",
        ),
    ] = False,
    max_cost: Annotated[
        float | None,
        typer.Option(
            min=0,
            metavar="DOLLARS",
            help="Each case's model budget in dollars, at the endpoints' configured prices.",
        ),
    ] = None,
    max_tokens: Annotated[
        int | None,
        typer.Option(min=0, help="Each case's model budget in tokens (input + output)."),
    ] = None,
    pool: Annotated[
        bool,
        typer.Option(
            "--pool",
            help="Run the whole pool as a user would: each case with its failing test, and "
            "from its issue text alone where it has one; resumable (see --fresh).",
        ),
    ] = False,
    jobs: Annotated[
        int | None, typer.Option(min=1, help="With --pool: case-modes at once (default: cores).")
    ] = None,
    fresh: Annotated[
        bool, typer.Option(help="With --pool: rerun the case-modes already in the results.")
    ] = False,
    previous: Annotated[
        Path | None,
        typer.Option(
            help="With --pool: a previous run's --json to compare with (default: the last "
            "run kept in the pool's results folder)."
        ),
    ] = None,
) -> None:
    """Score the agent on real-bug cases, beside the traceback and BM25 baselines."""

    from rich.console import Console

    from fixbugs.eval.full_agent import full_agent
    from fixbugs.eval.user_reports import with_user_reports
    from fixbugs.run.agent import models_from_config
    from fixbugs.run.model_steps import ModelSteps

    steps = ModelSteps.parse(model_steps) if model_steps is not None else None
    if pool:
        from fixbugs.eval.pool.command import PoolOptions, pool_eval

        if oracle or reports is not None or case or limit or localize_only:
            raise InputError(
                "--pool runs every case as a user: no --oracle, --reports, "
                "--case, --limit or --localize-only with it"
            )
        pool_eval(
            PoolOptions(
                cases,
                json_out,
                jobs,
                fresh,
                previous,
                config,
                no_model,
                repair_budget,
                steps,
                max_cost,
                max_tokens,
            )
        )
        return
    if cases is None:
        raise InputError("give --cases (a folder of case folders) or --pool")
    if oracle_noise and not oracle:
        raise InputError("--oracle-noise needs --oracle")
    if oracle and (no_model or config is not None):
        raise InputError("--oracle is the model: give neither --no-model nor --config with it")
    selected = load_cases(cases, case_id=case, limit=limit)
    selected = with_user_reports(selected, reports, no_test=no_test)
    if (
        not no_model and not oracle
    ):  # one line and exit 2 before any case when an endpoint cannot serve
        from agentrt import load_settings
        from fixbugs.run.preflight import preflight

        asyncio.run(preflight(load_settings(config)))
    until: StageName = "root_cause" if localize_only else "validation"
    models = None if no_model or as_user or oracle else models_from_config(config)
    agent = full_agent(
        models,
        until=until,
        model_steps=steps,
        repair_budget_s=repair_budget,
        max_cost_usd=max_cost,
        max_model_tokens=max_tokens,
    )
    if as_user:
        from fixbugs.eval.as_user import as_user_agent

        agent = as_user_agent(
            use_model=not no_model,
            config=config,
            repair_budget_s=repair_budget,
            model_steps=steps,
            max_cost_usd=max_cost,
            max_model_tokens=max_tokens,
        )
    noise = None
    if oracle:
        from fixbugs.eval.oracle import OracleNoise, oracle_agent

        noise = OracleNoise() if oracle_noise else None
        agent = oracle_agent(_endpoint_runner(as_user, until, repair_budget, steps), noise)
    console = Console()

    def show(r: CaseResult) -> None:
        rank = r.scores["agent"].rank
        top = terminal(repr(r.agent[:1]))  # the case's file name: its own words, inert
        console.print(
            f"{terminal(r.id):<14} agent rank {rank or '-':>2}  top: {top}  "
            f"repro={r.reproduction_confirmed} sbfl={r.sbfl_ran} region={r.region_hit} "
            f"validated={r.validated}  "
            f"{r.stage_s.get('agent_total', 0):.1f}s",
            highlight=False,
        )

    # as a user: the case's venv holds its requirements only (no coverage.py: SBFL must
    # supply its own); the agent's own eval adds coverage for its in-process SBFL
    extra: tuple[str, ...] = () if as_user else ("coverage",)
    results = asyncio.run(
        run_eval(
            selected,
            agent=agent,
            on_case=show,
            python_env=lambda py, reqs: ensure_python_env(py, reqs, extra),
        )
    )
    summary = summarize(results)
    _print_summary(summary)
    out: dict[str, object] = {"summary": asdict(summary), "cases": [asdict(r) for r in results]}
    if oracle:
        from fixbugs.eval.oracle_report import oracle_summary, print_oracle_summary

        said = oracle_summary(selected, results, noise)
        print_oracle_summary(said, console)
        out["oracle"] = asdict(said)
    if json_out:
        json_out.write_text(json.dumps(out, indent=2))
        console.print(f"JSON written to {json_out}")


def _endpoint_runner(
    as_user: bool, until: StageName, repair_budget: float | None, steps: ModelSteps | None
) -> Callable[[Mapping[str, str]], AgentRunner]:
    """The runner of one case whose models are what ``env`` points at (an oracle's URL)."""
    from fixbugs.eval.as_user import as_user_agent
    from fixbugs.eval.full_agent import endpoint_agent

    def make(env: Mapping[str, str]) -> AgentRunner:
        if as_user:
            return as_user_agent(
                use_model=True, repair_budget_s=repair_budget, model_steps=steps, model_env=env
            )
        return endpoint_agent(env, until=until, repair_budget_s=repair_budget, model_steps=steps)

    return make
