"""``fixbugs bench hostile``: how each parser of untrusted text grows with its input.

For every parser × adversarial generator of :mod:`fixbugs.bench.hostile_text`
it times the parser at 1 KB … 1 MB and fits the growth exponent, the slope
of log(time) over log(size) (:func:`growth_slope`): about 1 for linear
work, 2 for quadratic. A
slope over :data:`SUPERLINEAR` is flagged. The times are this machine's;
the slope is the figure to compare. A pair stops growing once it has spent
its time budget, so a quadratic parser cannot hold the run for hours: its
slope is fitted on the sizes it reached. Times are the thread's CPU time,
not the wall clock: on a shared machine a long run is preempted more often
than a short one, which reads as superlinear growth.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel

from fixbugs.bench.hostile_text import GENERATORS, PARSERS

__all__ = [
    "SIZES",
    "SUPERLINEAR",
    "Growth",
    "cpu_seconds",
    "growth_slope",
    "hostile_command",
    "measure",
]

SIZES = (1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20)
SUPERLINEAR = 1.2
_NOISE_S = 0.0005  # times below this are mostly call overhead: no slope is fitted on them
_REPEAT_BELOW_S = 0.05  # a run this short is repeated (best of 3): noise on a shared machine


class Growth(BaseModel):
    """One parser on one generator's texts: seconds by size, and the fitted exponent."""

    parser: str
    generator: str
    sizes: list[int]
    seconds: list[float]  # for the sizes reached (a pair out of budget stops early)
    slope: float | None
    superlinear: bool


class HostileBench(BaseModel):
    """What ``--json`` writes."""

    sizes: list[int]
    threshold: float
    results: list[Growth]


def growth_slope(sizes: Sequence[int], seconds: Sequence[float]) -> float | None:
    """The growth exponent: the median of the log-log slopes between consecutive sizes,
    on the times above the noise (the last two times when fewer are); None with fewer
    than two sizes.

    A median, not a least-squares line: one step distorted by the machine (a 1 MB
    string leaving the CPU's cache makes one step 8× for 4× the input, in ``re``'s own
    scan) moves a fitted line past 1.2, while quadratic work is 2 at every step.
    """
    points = [(n, t) for n, t in zip(sizes, seconds, strict=False) if t >= _NOISE_S]
    if len(points) < 2:
        points = list(zip(sizes, seconds, strict=False))[-2:]
    if len(points) < 2:
        return None
    steps = sorted(
        math.log(max(t2, 1e-7) / max(t1, 1e-7)) / math.log(n2 / n1)
        for (n1, t1), (n2, t2) in itertools.pairwise(points)
    )
    mid = len(steps) // 2
    return steps[mid] if len(steps) % 2 else (steps[mid - 1] + steps[mid]) / 2


def cpu_seconds(parse: Callable[[str], object], text: str) -> float:
    """The CPU time of ``parse(text)`` on this thread: the best of 3 for short runs."""
    best = math.inf
    for _ in range(3):
        start = time.thread_time()
        parse(text)
        took = time.thread_time() - start
        best = min(best, took)
        if took >= _REPEAT_BELOW_S:
            break
    return best


def measure(
    parser: str, generator: str, sizes: Sequence[int] = SIZES, *, budget_s: float = 0.5
) -> Growth:
    """Time ``parser`` on ``generator``'s texts of ``sizes``, until ``budget_s`` is spent."""
    parse = PARSERS[parser]
    parse("warm up")  # imports and compiled patterns are not the parser's growth
    reached: list[int] = []
    seconds: list[float] = []
    spent = 0.0
    for size in sizes:
        took = cpu_seconds(parse, GENERATORS[generator](size))
        reached.append(size)
        seconds.append(took)
        spent += took
        if spent > budget_s:
            break
    slope = growth_slope(reached, seconds)
    return Growth(
        parser=parser,
        generator=generator,
        sizes=reached,
        seconds=seconds,
        slope=slope,
        superlinear=slope is not None and slope > SUPERLINEAR,
    )


def _row(g: Growth) -> str:
    cells = [f"{t * 1000:9.1f}" for t in g.seconds] + ["        -"] * (len(SIZES) - len(g.seconds))
    slope = f"{g.slope:5.2f}" if g.slope is not None else "    -"
    flag = "  SUPERLINEAR" if g.superlinear else ""
    return f"{g.parser:<18} {g.generator:<20} {' '.join(cells)}  {slope}{flag}"


def hostile_command(
    parser: Annotated[
        list[str] | None, typer.Option(help="Only these parsers (repeat the option).")
    ] = None,
    budget: Annotated[
        float, typer.Option(help="Seconds one parser × generator may spend before it stops.")
    ] = 0.5,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the figures here as JSON.")
    ] = None,
) -> None:
    """Time every parser of untrusted text on adversarial inputs of 1 KB … 1 MB.

    Prints milliseconds by size and the growth exponent (log-log slope); an
    exponent over 1.2 is flagged SUPERLINEAR and the command exits 1.
    """
    names = parser or list(PARSERS)
    unknown = [p for p in names if p not in PARSERS]
    if unknown:
        raise typer.BadParameter(f"unknown parser(s) {unknown}; known: {', '.join(PARSERS)}")
    head = " ".join(f"{_label(n):>9}" for n in SIZES)
    typer.echo(f"{'parser':<18} {'generator':<20} {head}  slope  (ms)")
    results: list[Growth] = []
    for p in names:
        for g in GENERATORS:
            result = measure(p, g, budget_s=budget)
            results.append(result)
            typer.echo(_row(result))
    flagged = [r for r in results if r.superlinear]
    worst = max((r.slope for r in results if r.slope is not None), default=0.0)
    typer.echo(f"{len(results)} pairs, worst slope {worst:.2f}, {len(flagged)} over {SUPERLINEAR}")
    if json_out is not None:
        bench = HostileBench(sizes=list(SIZES), threshold=SUPERLINEAR, results=results)
        json_out.write_text(bench.model_dump_json(indent=2) + "\n")
    if flagged:
        raise typer.Exit(1)


def _label(size: int) -> str:
    return f"{size >> 20} MB" if size >= 1 << 20 else f"{size >> 10} KB"
