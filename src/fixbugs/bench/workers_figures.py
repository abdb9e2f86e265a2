"""The figures of ``fixbugs bench workers``: per (workload, worker count), and where it saturates.

Pure arithmetic on what :mod:`fixbugs.bench.workers` measured, so the
table and the saturation lines are tested on injected numbers, without a
run. Bugs per hour count the bugs whose last stage finished, over the wall
from the first stage claimed to the last bug finished; the speedup is
against the smallest worker count run (1 unless told otherwise).

A workload *saturates* at a worker count when the next count adds less
than half of what linear scaling would (2 → 4 workers giving under 1.5×
of 2's rate): past it, more workers buy little. Why is read off the
resources each count asks for: the sandbox slots of all workers against
the cores, the model slots of all workers against the model's
concurrency limit (and whether the simulator queued requests), and how
busy the machine's CPU was, which counts every process on it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace

__all__ = [
    "SATURATION_SHARE",
    "WORKLOADS",
    "BugOutcome",
    "Measured",
    "Row",
    "Saturation",
    "WorkerShape",
    "WorkersFigures",
    "figures",
    "rows_of",
    "saturation",
    "table_lines",
]

WORKLOADS = ("model-bound", "sandbox-bound")
# a step adding less than this share of linear scaling's gain is saturated
SATURATION_SHARE = 0.5
BUSY_CPU = 0.85  # a machine this busy (all processes) has no core left to give


@dataclass(frozen=True, slots=True)
class WorkerShape:
    """What one worker process is: its slots, the same at every count.

    A worker sized to the machine (sandbox slots = cores, model slots = the
    endpoint's limit, ``fixbugs worker``'s defaults) already takes all one
    machine offers, so a second one on it shows nothing; a deployment
    sizes each worker to its share, and adding workers adds those slots.
    """

    model_slots: int
    sandbox_slots: int


@dataclass(frozen=True, slots=True)
class BugOutcome:
    """One bug of a run: its report's verdict (``unfinished``: none) and why, in one line.

    A bug that is not validated may have run its repair to the wall-clock budget, which
    takes that long however many cores are left: the table says how many were.
    """

    title: str
    verdict: str
    summary: str
    run_s: float  # its stages' running time, all four together


@dataclass(frozen=True, slots=True)
class Measured:
    """One (workload, worker count) run, as measured.

    ``wall_s`` runs from the first stage claimed to the last bug finished;
    ``start_s`` from the workers' start to the first claim (process start,
    imports, the interpreter probe), kept out of the wall. ``cpu_busy`` is
    the machine's CPU busy share over the run (every process, other users'
    too); ``model_peak`` and ``model_queued`` the most model requests the
    simulator served at once and the most waiting for one of its slots
    (None: no model).
    """

    workload: str
    workers: int
    submitted: int
    finished: int
    validated: int
    wall_s: float
    start_s: float
    cpu_busy: float | None = None
    model_peak: int | None = None
    model_queued: int | None = None
    errors: tuple[str, ...] = ()
    workers_cpu_s: float | None = None  # CPU seconds of the workers and all they ran
    stage_run_s: dict[str, float] = field(default_factory=dict)  # mean per queue stage
    stage_wait_s: dict[str, float] = field(default_factory=dict)
    bugs: tuple[BugOutcome, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(Measured):
    """A run's figures: what was :class:`Measured` (its times rounded to 0.1 s), plus
    bugs per hour, the speedup and the workers' CPU seconds per bug finished."""

    per_hour: float
    speedup: float | None
    cpu_s_per_bug: float | None


@dataclass(frozen=True, slots=True)
class Saturation:
    """Where one workload stops scaling (``at`` None: not within the counts run), and why."""

    workload: str
    at: int | None
    line: str


@dataclass(frozen=True, slots=True)
class WorkersFigures:
    cores: int
    queue: str  # "redis" or "sqlite"
    profile: str  # the simulator's latency profile (model-bound)
    model_limit: int  # the simulator's concurrency limit: requests in service at once
    shape: WorkerShape
    rows: tuple[Row, ...]
    saturation: tuple[Saturation, ...]
    sandbox_cases: tuple[str, ...] = ()  # one worker's list of sandbox-bound bugs


def _per_hour(m: Measured) -> float:
    return round(m.finished / m.wall_s * 3600.0, 1) if m.wall_s > 0 else 0.0


def rows_of(measured: Sequence[Measured]) -> list[Row]:
    """Each run's row, the speedup against its workload's smallest worker count."""
    base: dict[str, float] = {}
    for m in sorted(measured, key=lambda m: m.workers):
        base.setdefault(m.workload, _per_hour(m))
    rows = []
    for m in measured:
        ph, b = _per_hour(m), base[m.workload]
        seen = replace(m, wall_s=round(m.wall_s, 1), start_s=round(m.start_s, 1))
        rows.append(
            Row(
                **{f.name: getattr(seen, f.name) for f in fields(Measured)},
                per_hour=ph,
                speedup=round(ph / b, 2) if b > 0 else None,
                cpu_s_per_bug=round(m.workers_cpu_s / m.finished, 1)
                if m.workers_cpu_s is not None and m.finished
                else None,
            )
        )
    return rows


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.0f}%"


def _why(
    row: Row, *, cores: int, shape: WorkerShape, model_limit: int, uses_model: bool
) -> list[str]:
    """What ``row``'s worker count asks of the machine and the model, bound or not."""
    w = row.workers
    sandbox = w * shape.sandbox_slots
    said = [
        f"{w} x {shape.sandbox_slots} sandbox slots = {sandbox} "
        f"{'>=' if sandbox >= cores else '<'} {cores} cores"
    ]
    if row.cpu_s_per_bug is not None:
        used = row.cpu_s_per_bug * row.per_hour / 3600.0
        said.append(f"the workers used {used:.2f} cores ({row.cpu_s_per_bug} CPU-s a bug)")
    if row.cpu_busy is not None:
        busy = row.cpu_busy >= BUSY_CPU
        said.append(f"machine CPU {_pct(row.cpu_busy)} busy{' (no core left)' if busy else ''}")
    if uses_model:
        model = w * shape.model_slots
        said.append(
            f"{w} x {shape.model_slots} model slots = {model} "
            f"{'>=' if model >= model_limit else '<'} the model's limit {model_limit}"
        )
        if row.model_queued:
            said.append(f"{row.model_queued} requests queued for a model slot")
    return said


def saturation(
    rows: Sequence[Row], *, cores: int, shape: WorkerShape, model_limit: int
) -> Saturation:
    """Where one workload's rows (one workload) stop scaling, and what the count asks for."""
    rows = sorted(rows, key=lambda r: r.workers)
    workload = rows[0].workload
    model = workload == "model-bound"
    gains = ", ".join(f"{r.speedup}x at {r.workers}" for r in rows[1:] if r.speedup is not None)
    for prev, cur in itertools.pairwise(rows):
        ideal = cur.workers / prev.workers
        got = cur.per_hour / prev.per_hour if prev.per_hour > 0 else 0.0
        if got - 1.0 < SATURATION_SHARE * (ideal - 1.0):
            why = _why(cur, cores=cores, shape=shape, model_limit=model_limit, uses_model=model)
            line = (
                f"{workload}: saturates at {prev.workers} worker{'s' if prev.workers > 1 else ''} "
                f"({prev.workers} -> {cur.workers} gave {got:.2f}x of an ideal {ideal:.2f}x); "
                f"at {cur.workers}: {'; '.join(why)}"
            )
            return Saturation(workload, prev.workers, line)
    last = rows[-1]
    why = _why(last, cores=cores, shape=shape, model_limit=model_limit, uses_model=model)
    if len(rows) == 1:
        return Saturation(
            workload,
            None,
            f"{workload}: one worker count run, nothing to compare; at {last.workers}: "
            + "; ".join(why),
        )
    return Saturation(
        workload,
        None,
        f"{workload}: not saturated up to {last.workers} workers"
        f"{' (' + gains + ')' if gains else ''}; at {last.workers}: {'; '.join(why)}",
    )


def figures(
    measured: Sequence[Measured],
    *,
    cores: int,
    queue: str,
    profile: str,
    model_limit: int,
    shape: WorkerShape,
    sandbox_cases: tuple[str, ...] = (),
) -> WorkersFigures:
    """The rows of every run and one saturation line per workload (pure)."""
    rows = rows_of(measured)
    lines = tuple(
        saturation(
            [r for r in rows if r.workload == w], cores=cores, shape=shape, model_limit=model_limit
        )
        for w in WORKLOADS
        if any(r.workload == w for r in rows)
    )
    return WorkersFigures(
        cores, queue, profile, model_limit, shape, tuple(rows), lines, sandbox_cases
    )


_HEAD = ("workload", "workers", "finished", "validated", "wall s", "start s", "bugs/h", "vs 1st")
_HEAD2 = ("CPU-s/bug", "CPU busy", "model peak/queued")


def table_lines(f: WorkersFigures) -> list[str]:
    """The table, side by side, then the saturation lines."""
    cells = [(*_HEAD, *_HEAD2)]
    for r in f.rows:
        model = "-" if r.model_peak is None else f"{r.model_peak}/{r.model_queued or 0}"
        cells.append(
            (
                r.workload,
                str(r.workers),
                f"{r.finished}/{r.submitted}",
                str(r.validated),
                f"{r.wall_s:.1f}",
                f"{r.start_s:.1f}",
                f"{r.per_hour:.1f}",
                "-" if r.speedup is None else f"{r.speedup:.2f}x",
                "-" if r.cpu_s_per_bug is None else f"{r.cpu_s_per_bug:.1f}",
                _pct(r.cpu_busy),
                model,
            )
        )
    widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))]
    out = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in cells
    ]
    out += [s.line for s in f.saturation]
    for r in f.rows:
        stages = ", ".join(
            f"{s} {r.stage_run_s[s]:.1f}/{r.stage_wait_s.get(s, 0.0):.1f}" for s in r.stage_run_s
        )
        if stages:
            out.append(f"{r.workload} x{r.workers}, mean s per stage (run/queued): {stages}")
    for r in f.rows:
        out += [f"{r.workload} x{r.workers}: {e}" for e in r.errors]
        out += [
            f"{r.workload} x{r.workers}: {b.title} {b.verdict} after {b.run_s:.1f} s: {b.summary}"
            for b in r.bugs
            if b.verdict != "validated"
        ]
    return out
