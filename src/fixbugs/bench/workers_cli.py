"""``fixbugs bench workers`` on the command line: its options, what it says it ran, the table.

The runs are :mod:`fixbugs.bench.workers`'s, the figures
:mod:`fixbugs.bench.workers_figures`'; this module only reads the options
and prints.
"""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from fixbugs.bench.workers import (
    DEFAULT_CASES,
    DEFAULT_SANDBOX_CASES,
    DEFAULT_SHAPE,
    ScaleOptions,
    parse_counts,
    run_workers_bench,
)
from fixbugs.bench.workers_figures import (
    WORKLOADS,
    Measured,
    WorkersFigures,
    WorkerShape,
    table_lines,
)
from fixbugs.errors import InputError

__all__ = ["header_lines", "workers_command"]


def header_lines(opts: ScaleOptions, f: WorkersFigures) -> list[str]:
    """What was run: the queue, the machine, a worker's slots, each workload's bugs and model."""
    queue = (
        "a private redis-server on a free port"
        if f.queue == "redis"
        else "a SQLite file (no redis-server on PATH)"
    )
    s = f.shape
    lines = [
        f"queue: {f.queue} ({queue}); cores: {f.cores} (os.cpu_count())",
        f"each worker: {s.model_slots} model slots, {s.sandbox_slots} sandbox "
        f"slot{'s' if s.sandbox_slots > 1 else ''}, the same at every count "
        "(a worker is a deployment's unit, not the whole machine)",
    ]
    if "model-bound" in opts.workloads:
        lines.append(
            f"model-bound: {opts.bugs} bugs per worker (seeded copies of the bundled example); "
            f"the simulator ({f.profile!r} profile) as one server process, its concurrency "
            f"limit {f.model_limit} requests in service at once"
        )
    if "sandbox-bound" in opts.workloads:
        lines.append(
            f"sandbox-bound: {opts.sandbox_bugs} bugs per worker ({', '.join(f.sandbox_cases)} "
            f"of {opts.cases}), --no-model"
        )
    lines.append(
        "wall: first stage claimed -> last bug finished; 'start s': workers' start -> first "
        "claim (not in the wall); CPU busy: the whole machine, every process on it"
    )
    return lines


def workers_command(
    workers: Annotated[
        str, typer.Option(help="Worker process counts to run, comma-separated.")
    ] = "1,2,4",
    bugs: Annotated[
        int,
        typer.Option(
            min=1,
            help="Model-bound bugs per worker (seeded copies of the example): w workers get "
            "w times this list.",
        ),
    ] = 4,
    sandbox_bugs: Annotated[
        int,
        typer.Option(min=1, help="Sandbox-bound bugs per worker (the cases, cycled), likewise."),
    ] = 2,
    cases: Annotated[
        Path, typer.Option(help="Real-bug case folders for the sandbox-bound workload.")
    ] = DEFAULT_CASES,
    case: Annotated[
        list[str] | None,
        typer.Option(
            help="A case of --cases to use (repeat); default: those whose repair ends at a "
            f"validated fix with no model ({', '.join(DEFAULT_SANDBOX_CASES)}).",
        ),
    ] = None,
    model_slots: Annotated[
        int, typer.Option(min=1, help="Model slots of each worker.")
    ] = DEFAULT_SHAPE.model_slots,
    sandbox_slots: Annotated[
        int, typer.Option(min=1, help="Sandbox slots of each worker.")
    ] = DEFAULT_SHAPE.sandbox_slots,
    profile: Annotated[
        str, typer.Option(help="Simulator latency profile (agentrt sim profiles).")
    ] = "hosted",
    model_limit: Annotated[
        int, typer.Option(min=1, help="The simulator's concurrency limit (requests in service).")
    ] = 64,
    workload: Annotated[
        list[str] | None,
        typer.Option(help=f"Workload to run (repeat); default both: {', '.join(WORKLOADS)}."),
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the figures as JSON here.")
    ] = None,
) -> None:
    """Bugs per hour at 1, 2, 4 worker processes on one queue: model-bound and sandbox-bound."""
    from agentrt.sim import PROFILES

    if profile not in PROFILES:
        raise InputError(f"--profile {profile!r}: known: {', '.join(PROFILES)}")
    for w in workload or ():
        if w not in WORKLOADS:
            raise InputError(f"--workload {w!r}: known: {', '.join(WORKLOADS)}")
    opts = ScaleOptions(
        counts=parse_counts(workers),
        bugs=bugs,
        sandbox_bugs=sandbox_bugs,
        cases=cases,
        case_ids=tuple(case) if case else DEFAULT_SANDBOX_CASES,
        shape=WorkerShape(model_slots=model_slots, sandbox_slots=sandbox_slots),
        profile=profile,
        model_limit=model_limit,
        workloads=tuple(w for w in WORKLOADS if w in workload) if workload else WORKLOADS,
    )

    def said(m: Measured) -> None:
        print(
            f"  {m.workload} x{m.workers}: {m.finished}/{m.submitted} bugs in {m.wall_s:.1f} s",
            file=sys.stderr,
            flush=True,
        )

    f = asyncio.run(run_workers_bench(opts, on_run=said))
    for line in [*header_lines(opts, f), "", *table_lines(f)]:
        print(line)
    if json_out is not None:
        from fixbugs.sandbox.untrusted import write_output

        text = json.dumps(asdict(f), indent=2) + "\n"
        write_output(json_out, text.encode(), what="--json")
