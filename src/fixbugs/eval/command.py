"""``fixbugs eval``, the command: its options, the runner it picks, the summary it prints.

Apart from :mod:`fixbugs.eval.run` (the driver over case folders) so that the pool's
evaluation (:mod:`fixbugs.eval.pool`), which drives :func:`~fixbugs.eval.run.run_eval`,
sits between the two and nothing imports back up.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fixbugs.errors import InputError
from fixbugs.eval.case import AgentRunner, Case
from fixbugs.eval.run import CaseResult, EvalSummary, load_cases, run_eval, summarize
from fixbugs.inputs.inert import terminal
from fixbugs.pyenv.testenv import ensure_python_env
from fixbugs.run.model_steps import ModelStepsOption

if TYPE_CHECKING:
    from fixbugs.run.driver import StageName
    from fixbugs.run.model_steps import ModelSteps

__all__ = ["eval_command"]


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
        f"validated fixes: {summary.validated_fixes}/{n} "
        f"({summary.validated_wrong} more said validated but fail the case's tests)   "
        f"passes tests, not validated: {summary.passes_tests}/{n} "
        f"({summary.passes_tests_gold} of them pass the case's tests)   "
        f"SBFL ran: {summary.sbfl_ran}/{n}"
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
    mode: Annotated[
        str | None,
        typer.Option(
            help="'test' (the failing test given) or 'issue' (the issue text alone, on the "
            "tree with only the tests of then: a pool case's issue.md and repo-issue.tar.gz); "
            "with --pool default both, with --cases default test."
        ),
    ] = None,
) -> None:
    """Score the agent on real-bug cases, beside the traceback and BM25 baselines."""

    from rich.console import Console

    from fixbugs.eval.full_agent import full_agent
    from fixbugs.eval.pool.evaluate import MODES, built_pool_of, pool_python_env
    from fixbugs.eval.user_reports import with_user_reports
    from fixbugs.run.agent import models_from_config
    from fixbugs.run.model_steps import ModelSteps

    steps = ModelSteps.parse(model_steps) if model_steps is not None else None
    if mode is not None and mode not in MODES:
        raise InputError(f"--mode {mode!r}: give test or issue")
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
                tuple(m for m in MODES if mode in (None, m)),
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
    if mode == "issue":
        selected = _issue_modes(selected, reports is not None or no_test)
    selected = with_user_reports(selected, reports, no_test=no_test)
    if (
        not no_model and not oracle
    ):  # one line and exit 2 before any case when an endpoint cannot serve
        from fixbugs.run.agent import preflight_steps

        asyncio.run(preflight_steps(config, steps))  # the endpoints the cases will use
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
            f"verdict={r.verdict} validated={r.validated}  "
            f"{r.stage_s.get('agent_total', 0):.1f}s",
            highlight=False,
        )

    # as a user: the case's venv holds its requirements only (no coverage.py: SBFL must
    # supply its own); the agent's own eval adds coverage for its in-process SBFL, except
    # in a built pool, whose venvs are the builder's (the agent's overlay supplies it)
    extra: tuple[str, ...] = () if as_user else ("coverage",)
    built = built_pool_of(cases)
    python_env: Callable[[str, Sequence[str]], Path] = (
        pool_python_env(built)
        if built is not None
        else lambda py, reqs: ensure_python_env(py, reqs, extra)
    )
    results = asyncio.run(run_eval(selected, agent=agent, on_case=show, python_env=python_env))
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


def _issue_modes(cases: list[Case], other_reports: bool) -> list[Case]:
    """``--mode issue`` with ``--cases``: each case that has an issue text, from it alone."""
    from fixbugs.eval.pool.evaluate import issue_mode

    if other_reports:
        raise InputError("--mode issue is the issue text alone: no --reports or --no-test with it")
    found = [c for c in map(issue_mode, cases) if c is not None]
    if not found:
        raise InputError(
            "--mode issue: no case here has an issue text (issue.md, repo-issue.tar.gz)"
        )
    return found


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
