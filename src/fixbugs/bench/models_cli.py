"""``fixbugs bench models``' command line: the options, checked, and the table printed.

The bench itself (:mod:`fixbugs.bench.models`) runs the evals and judges
what pays; this module reads the user's options and writes its output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from agentrt import Trust
from fixbugs.bench.models import CANDIDATES, EvalArgs, Row, bench_models, child_eval, render
from fixbugs.errors import InputError
from fixbugs.run.model_steps import MODEL_STEPS

__all__ = ["models_command"]


def models_command(
    cases: Annotated[
        list[Path] | None,
        typer.Option("--cases", help="Case folder (repeatable; default dev and dev-wide)."),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", help=f"Candidate (repeatable): {', '.join(CANDIDATES)}."),
    ] = None,
    step: Annotated[
        list[str] | None,
        typer.Option("--step", help=f"Model step (repeatable): {', '.join(MODEL_STEPS)}."),
    ] = None,
    baseline_runs: Annotated[
        int, typer.Option(min=1, help="Runs without a model per set (their spread).")
    ] = 2,
    repair_budget: Annotated[
        float, typer.Option(min=1, help="Repair budget (s) of the repair steps' evals.")
    ] = 60.0,
    reports: Annotated[
        Path | None,
        typer.Option(
            "--reports",
            help="A folder of <case-id>.md reports that replace each case's report.md "
            "(eval/snippet-reports).",
        ),
    ] = None,
    no_test: Annotated[
        bool, typer.Option("--no-test", help="Give the agent no test command (the issue alone).")
    ] = False,
    mode: Annotated[
        str | None,
        typer.Option(
            help="'issue': each case of a built pool from its issue text alone (fixbugs eval "
            "--mode issue)."
        ),
    ] = None,
    trust: Annotated[
        str,
        typer.Option(
            help="The candidates' trust: 'low' (the default's: a model answer only breaks the "
            "evidence's ties) or 'high' (it may overrule the evidence: is the model any good?)."
        ),
    ] = "low",
    json_out: Annotated[Path | None, typer.Option("--json", help="Write the rows here.")] = None,
) -> None:
    """Each small model on each model step, beside no model: figures, wall, and what pays."""
    from fixbugs.eval.pool.evaluate import MODES  # not at the CLI's start-up

    sets = cases or [Path("../shared/bugs/dev"), Path("../shared/bugs/dev-wide")]
    for s in sets:
        if not s.is_dir():
            raise InputError(f"no case folder at {s}")
    if trust not in ("low", "high"):
        raise InputError(f"--trust {trust!r}: give low or high")
    level: Trust = "high" if trust == "high" else "low"
    picked = next((m for m in MODES if m == mode), None)
    if mode is not None and picked is None:
        raise InputError(f"--mode {mode!r}: give test or issue")
    if picked == "issue" and (reports is not None or no_test):
        raise InputError("--mode issue is the issue text alone: no --reports or --no-test with it")
    if reports is not None and not reports.is_dir():
        raise InputError(f"--reports {reports}: not a folder; give a folder of <case-id>.md files")
    names = model or list(CANDIDATES)
    bad = [n for n in names if n not in CANDIDATES]
    if bad:
        raise InputError(f"--model: unknown {', '.join(bad)}; give some of {', '.join(CANDIDATES)}")
    wanted = step or list(MODEL_STEPS)
    unknown = [s for s in wanted if s not in MODEL_STEPS]
    if unknown:
        raise InputError(
            f"--step: unknown {', '.join(unknown)}; give some of {', '.join(MODEL_STEPS)}"
        )
    steps = [s for s in MODEL_STEPS if s in wanted]
    rows = bench_models(
        sets,
        names,
        steps,
        baseline_runs=baseline_runs,
        run_eval=child_eval(EvalArgs(repair_budget, reports, no_test, picked, level)),
        progress=lambda line: typer.echo(line, err=True),
    )
    if json_out:
        said = [{**_row_json(r), "trust": trust} for r in rows]
        json_out.write_text(json.dumps(said, indent=2) + "\n")
    typer.echo(f"candidates at trust {trust}")
    typer.echo(render(rows))


def _row_json(r: Row) -> dict[str, object]:
    return {
        "cases": str(r.cases),
        "model": r.model,
        "step": r.step,
        "error": r.run.error,
        "figures": {
            f: {"count": r.run.count(f), "none": r.baseline[0].count(f), "spread": r.spread(f)}
            for f in r.figures
        },
        "cases_run": len(r.run.cases),
        "changed": r.changed(),
        "wall_per_case_s": round(r.run.mean_wall(), 2),
        "wall_ratio": round(r.wall_ratio(), 3),
        "pays": r.pays(),
    }
