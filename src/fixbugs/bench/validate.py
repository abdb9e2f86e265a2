"""``fixbugs bench validate``: what the verdict's checks cost the validation stage.

Issue 44 made "validated" rest on more than the tests: each passing
candidate is judged (demoting shapes, a change no test exercises), the search
goes on past a pass that fails a check, the least change leads, and the
package's tests run on the lead. Those checks must not make the stage much
slower, so this bench runs, per case, one agent run (no model, so the
candidate list is the same both times) whose validation stage validates its
candidates twice, side by side (:class:`fixbugs.repair.summary.ChecksBench`):
on the tests alone, as the stage did before those checks, then as a run does.
It prints each case's two walls, their ratio and each pass's fix, then the
ratio of the summed walls.

Cases are folders in the shared format (``case.json``, ``report.md``,
``repo.tar.gz``); the tests run in each case's venv made from its
requirements alone (as ``fixbugs eval --as-user`` makes it), with no
coverage.py.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated

import typer

from fixbugs.errors import InputError

__all__ = ["CaseChecks", "checks_total", "validate_command"]


@dataclass(frozen=True, slots=True)
class CaseChecks:
    """One case's two passes (seconds), and what each gave."""

    id: str
    tests_only_s: float
    with_checks_s: float
    ratio: float | None
    verdict: str  # the checked pass's verdict level
    same_fix: bool
    tests_only_fix: str | None
    with_checks_fix: str | None
    note: str = ""  # why a case has no figures (no candidate reached validation)


def checks_total(rows: list[CaseChecks]) -> float | None:
    """The summed checked walls over the summed tests-only walls, over cases with both."""
    timed = [r for r in rows if not r.note]
    plain = sum(r.tests_only_s for r in timed)
    return round(sum(r.with_checks_s for r in timed) / plain, 2) if plain > 0 else None


async def _one(case_dir: Path, test: str, python: Path, budget_s: float) -> CaseChecks:
    from fixbugs.bench.repair import case_inputs
    from fixbugs.run.agent import run_from_paths

    work = Path(tempfile.mkdtemp(prefix="fixbugs-bench-validate-"))
    try:
        report, repo, _ = case_inputs(case_dir, work)
        result = await run_from_paths(
            report=report,
            repo=repo,
            test=test,
            use_model=False,
            python=python,
            repair_budget_s=budget_s,
            checks_bench=True,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rep = result.model.repair
    figures = rep.checks_bench if rep is not None else None
    if figures is None:
        why = result.model.validation.summary
        return CaseChecks(case_dir.name, 0.0, 0.0, None, "no_fix", True, None, None, why)
    return CaseChecks(
        case_dir.name,
        figures.tests_only_s,
        figures.with_checks_s,
        figures.ratio,
        figures.with_checks_verdict,
        figures.same_fix,
        figures.tests_only_fix,
        figures.with_checks_fix,
    )


def validate_command(
    cases: Annotated[
        Path, typer.Option(help="A folder of bug case folders (case.json, report.md, repo.tar.gz).")
    ],
    case: Annotated[
        list[str] | None, typer.Option(help="Only these case ids (repeat the option).")
    ] = None,
    repair_budget: Annotated[
        float, typer.Option(min=1, help="Seconds of validation for each of the two passes.")
    ] = 90.0,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the rows and the total here.")
    ] = None,
) -> None:
    """Validate each case's candidates on the tests alone, then with the verdict's checks."""
    from fixbugs.eval.run import load_cases
    from fixbugs.pyenv.testenv import ensure_python_env

    selected = load_cases(cases)
    if case:
        missing = sorted(set(case) - {c.id for c in selected})
        if missing:
            raise InputError(f"--case {missing[0]}: no such case folder under {cases}")
        selected = [c for c in selected if c.id in case]
    rows: list[CaseChecks] = []
    for c in selected:
        if not c.test_command:
            rows.append(CaseChecks(c.id, 0.0, 0.0, None, "no_fix", True, None, None,
                                   "the case has no test command"))  # fmt: skip
            continue
        bin_dir = ensure_python_env(c.python, c.requirements, ())
        row = asyncio.run(_one(c.dir, c.test_command, bin_dir / "python", repair_budget))
        rows.append(row)
        typer.echo(_line(row))
    total = checks_total(rows)
    typer.echo(
        f"summed walls, with checks / tests only: {total if total is not None else '-'}x "
        f"over {sum(1 for r in rows if not r.note)} case(s)"
    )
    if json_out is not None:
        json_out.write_text(
            json.dumps({"cases": [asdict(r) for r in rows], "ratio": total}, indent=2)
        )


def _line(r: CaseChecks) -> str:
    if r.note:
        return f"{r.id:<16} -: {r.note}"
    same = "same fix" if r.same_fix else "another fix"
    return (
        f"{r.id:<16} tests only {r.tests_only_s:7.1f} s   with checks {r.with_checks_s:7.1f} s"
        f"   x{r.ratio if r.ratio is not None else '-'}   {r.verdict}, {same}"
    )
