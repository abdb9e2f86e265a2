"""``fixbugs bench steps``: the run with every model step beside the run with the default steps.

The embedded model's steps cost most of a run's time (prefill and decode on
two cores), so the default takes on a low-trust endpoint only the steps
measured to change an outcome (:mod:`fixbugs.run.model_steps`). This bench
is the side-by-side check of that choice on one bug: it runs the bundled
example (or a case) with ``--model-steps all`` (the old default) and with the
default, interleaved round by round so the machine's load falls on both
alike, and reports each run's wall time, its stage walls and its validated
patch. The claim holds when the default is faster *and* every run ranked the
same file first, found the same root cause and validated the same patch.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from fixbugs.examples import example_dir
from fixbugs.run.model_steps import ALL_STEPS, ModelSteps

__all__ = ["StepsRun", "bench_steps", "run_example", "steps_command"]


@dataclass(frozen=True, slots=True)
class StepsRun:
    """One run of the bench: which steps, how long, which patch validated."""

    label: str
    steps: str
    wall_s: float
    stage_s: dict[str, float]
    validated: bool
    patch: str | None
    top_file: str | None = None
    root_cause: str | None = None  # path:start-end


RunOne = Callable[[str, ModelSteps | None], Awaitable[StepsRun]]


async def run_example(
    label: str, steps: ModelSteps | None, example: Path, config: Path | None
) -> StepsRun:
    """One whole run of ``example`` as ``fixbugs run --example`` makes it, with ``steps``."""
    from fixbugs.run.agent import run_from_paths

    t0 = time.perf_counter()
    report = await run_from_paths(
        report=example / "report.md",
        repo=example / "repo",
        logs=sorted((example / "logs").glob("*")),
        traces=sorted((example / "traces").glob("*")),
        config=config,
        model_steps=steps,
    )
    wall = time.perf_counter() - t0
    m = report.model
    said = [n for n in m.notes if n.startswith("model steps: ")]
    return StepsRun(
        label,
        said[0].removeprefix("model steps: ") if said else "none",
        round(wall, 2),
        {name: round(s.wall_s, 2) for name, s in m.stages.items()},
        m.validated,
        m.patch,
        m.ranked_files[0].path if m.ranked_files else None,
        f"{rc.path}:{rc.lines[0]}-{rc.lines[1]}" if (rc := m.root_cause) else None,
    )


async def bench_steps(run_one: RunOne, *, rounds: int = 1) -> dict[str, object]:
    """``rounds`` pairs of runs, all steps then the default, and their ratio of medians."""
    runs: list[StepsRun] = []
    for _ in range(rounds):
        runs.append(await run_one("all_steps", ALL_STEPS))
        runs.append(await run_one("default", None))
    old = _median([r.wall_s for r in runs if r.label == "all_steps"])
    new = _median([r.wall_s for r in runs if r.label == "default"])
    patches = {r.patch for r in runs}
    found = {(r.top_file, r.root_cause) for r in runs}
    return {
        "runs": [_as_json(r) for r in runs],
        "all_steps_median_s": old,
        "default_median_s": new,
        "speedup": round(old / new, 2) if new else None,
        "same_validated_patch": len(patches) == 1 and all(r.validated for r in runs),
        "same_localization": len(found) == 1,
    }


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else round((s[mid - 1] + s[mid]) / 2, 2)


def _as_json(r: StepsRun) -> dict[str, object]:
    return {
        "label": r.label,
        "steps": r.steps,
        "wall_s": r.wall_s,
        "stage_s": r.stage_s,
        "validated": r.validated,
        "patch": r.patch,
        "top_file": r.top_file,
        "root_cause": r.root_cause,
    }


def steps_command(
    rounds: Annotated[int, typer.Option(min=1, help="Pairs of runs (all steps, default).")] = 1,
    config: Annotated[
        Path | None, typer.Option(help="agentrt config TOML (endpoints, roles).")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the figures as JSON here.")
    ] = None,
) -> None:
    """The bundled example with every model step, beside the default steps."""
    example = example_dir("invoice")

    async def one(label: str, steps: ModelSteps | None) -> StepsRun:
        return await run_example(label, steps, example, config)

    result = asyncio.run(bench_steps(one, rounds=rounds))
    text = json.dumps(result, indent=2)
    if json_out:
        json_out.write_text(text)
    typer.echo(
        f"all steps {result['all_steps_median_s']} s, default {result['default_median_s']} s "
        f"(speedup {result['speedup']}); same validated patch: {result['same_validated_patch']}, "
        f"same top file and root cause: {result['same_localization']}"
    )
