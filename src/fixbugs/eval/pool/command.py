"""``fixbugs eval --pool``'s command side: options in, the table and ``--json`` out.

The driver is :mod:`.evaluate` (the one eval driver, as-user runner), the
table :mod:`.figures`. The previous run's figures come from ``--previous``
or from ``<results>/last-run.json``, which each finished run replaces.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from fixbugs.errors import InputError
from fixbugs.eval.pool.evaluate import (
    MODES,
    POOL_REPAIR_BUDGET_S,
    POOL_RUN_TIMEOUT_S,
    Mode,
    PoolRow,
    run_pool,
)
from fixbugs.eval.pool.figures import dump_report, load_report, pool_report, print_report
from fixbugs.inputs.inert import terminal
from fixbugs.run.model_steps import ModelSteps

__all__ = ["DEFAULT_POOL", "PoolOptions", "pool_eval"]

DEFAULT_POOL = Path.home() / ".cache" / "fixbugs" / "pool"
LAST_RUN = "last-run.json"


@dataclass(frozen=True, slots=True)
class PoolOptions:
    pool: Path | None
    json_out: Path | None
    jobs: int | None
    fresh: bool
    previous: Path | None
    config: Path | None
    no_model: bool
    repair_budget_s: float | None
    model_steps: ModelSteps | None
    max_cost_usd: float | None
    max_tokens: int | None
    modes: tuple[Mode, ...] = MODES


def pool_eval(opts: PoolOptions) -> None:
    """Run the pool (resuming), print its table, keep it as the next run's previous."""
    from fixbugs.eval.as_user import as_user_agent

    pool = opts.pool or DEFAULT_POOL
    if not pool.is_dir():
        raise InputError(f"--cases {pool}: no pool there; build it with `fixbugs pool build`")
    results = pool / "results"
    previous_file = opts.previous or (results / LAST_RUN)
    previous = load_report(previous_file) if previous_file.is_file() else None
    if opts.previous is not None and previous is None:
        raise InputError(f"--previous {opts.previous}: no such file")
    if not opts.no_model:  # one line and exit 2 before any case when an endpoint cannot serve
        from fixbugs.run.agent import preflight_steps

        # the endpoints the cases will use
        asyncio.run(preflight_steps(opts.config, opts.model_steps))
    budget = opts.repair_budget_s or POOL_REPAIR_BUDGET_S
    agent = as_user_agent(
        use_model=not opts.no_model,
        config=opts.config,
        repair_budget_s=budget,
        model_steps=opts.model_steps,
        max_cost_usd=opts.max_cost_usd,
        max_model_tokens=opts.max_tokens,
        timeout_s=POOL_RUN_TIMEOUT_S,
    )
    console = Console(emoji=False, highlight=False, soft_wrap=True)

    def show(row: PoolRow, kept: bool) -> None:
        console.print(
            f"{terminal(row.case_id):<16} {row.mode:<5} "
            f"{'(kept) ' if kept else ''}top-1={row.top1} region={row.region} "
            f"repro={row.reproduction} validated={row.validated} accepted={row.accepted}  "
            f"{terminal(row.detail)}  {row.wall_s:.0f}s"
        )

    jobs = opts.jobs or os.cpu_count() or 1
    rows = asyncio.run(
        run_pool(
            pool,
            agent=agent,
            results=results,
            jobs=jobs,
            fresh=opts.fresh,
            on_row=show,
            modes=opts.modes,
        )
    )
    settings = {
        "repair_budget_s": f"{budget:g}",
        "run_timeout_s": f"{POOL_RUN_TIMEOUT_S:g}",
        "jobs": str(jobs),
        "model": "none" if opts.no_model else "configured",
        "modes": ", ".join(opts.modes),
    }
    report = pool_report(pool, rows, previous, previous_file if previous else None, settings)
    print_report(report, console)
    data = dump_report(report)
    (results / LAST_RUN).write_bytes(data)
    if opts.json_out:
        opts.json_out.write_bytes(data)
        console.print(f"JSON written to {terminal(str(opts.json_out))}")
