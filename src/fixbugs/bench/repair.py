"""``fixbugs bench repair``: the same candidate set validated sequentially and in parallel.

One run of the agent (no model, so the candidate list is deterministic)
reproduces the bug, localizes it and ranks the repair candidates once; the
validation stage then validates that list twice, side by side: one
candidate at a time, then through the scatter-gather with a limit of one
per core. Both stop at the first low-risk fix in rank order, so the
validated result must be the same; the figures say how much faster the
parallel pass found it.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from fixbugs.errors import InputError

__all__ = ["bench_app", "bench_repair", "case_inputs"]

bench_app = typer.Typer(help="Benchmarks of FixBugs' own stages.", no_args_is_help=True)


async def bench_repair(
    report: Path,
    repo: Path,
    test: str | None,
    python: Path | None,
    candidates: int,
    budget_s: float,
) -> dict[str, object]:
    from fixbugs.run.agent import run_from_paths

    result = await run_from_paths(
        report=report,
        repo=repo,
        test=test,
        use_model=False,
        python=python,
        repair_budget_s=budget_s,
        repair_candidates=candidates,
        repair_bench=True,
    )
    rep = result.model.repair
    if rep is None or rep.bench is None:
        raise InputError("no candidates were validated: " + result.model.validation.summary)
    return {
        **rep.bench.model_dump(mode="json"),
        "validated_fix": rep.validated[0].why if rep.validated else None,
        "candidates": rep.candidates,
    }


def case_inputs(case: Path, work: Path) -> tuple[Path, Path, str]:
    """A case folder's report, its tree extracted into ``work``, and its test command."""
    meta = json.loads((case / "case.json").read_text())
    with tarfile.open(case / "repo.tar.gz") as tf:
        tf.extractall(work, filter="data")
    return case / "report.md", work, str(meta["test_command"])


@bench_app.command("repair")
def repair_command(
    case: Annotated[
        Path | None, typer.Option(help="A bug case folder (report.md, repo.tar.gz, case.json).")
    ] = None,
    report: Annotated[Path | None, typer.Option(help="Bug report (with --repo).")] = None,
    repo: Annotated[Path | None, typer.Option(help="Repository (with --report).")] = None,
    test: Annotated[str | None, typer.Option(help="The failing test command.")] = None,
    python: Annotated[Path | None, typer.Option(help="Interpreter that runs the tests.")] = None,
    candidates: Annotated[int, typer.Option(min=1, help="Most candidates to validate.")] = 300,
    budget: Annotated[float, typer.Option(min=1, help="Seconds per validation pass.")] = 600.0,
    json_out: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """Validate one candidate set sequentially, then in parallel; print both timings."""
    tmp: Path | None = None
    try:
        if case is not None:
            tmp = Path(tempfile.mkdtemp(prefix="fixbugs-bench-"))
            report, repo, case_test = case_inputs(case, tmp)
            test = test or case_test
        if report is None or repo is None:
            raise InputError("give --case, or --report and --repo")
        figures = asyncio.run(bench_repair(report, repo, test, python, candidates, budget))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if json_out:
        typer.echo(json.dumps(figures, indent=2))
        return
    typer.echo(
        f"sequential {figures['sequential_s']:.1f} s, parallel {figures['parallel_s']:.1f} s "
        f"(x{figures['speedup']}, limit {figures['limit']}); first validated fix after "
        f"{figures['first_validated_s']} s; same validated result: "
        f"{figures['same_validated_result']}"
    )
