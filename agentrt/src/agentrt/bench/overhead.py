"""`overhead`: CPU cost per scheduled call of the executor's map.

Zero-latency calls isolate what the scheduler itself costs: agentrt's
bounded scatter-gather, a plain ``asyncio.gather`` (the floor), and
LangGraph's ``Send`` map-reduce (if the optional ``bench`` extra is
installed), each at several sizes, in one run. CPU time (process time) is
measured, not wall-clock, so other load on a shared machine matters less.
"""

from __future__ import annotations

import asyncio
import gc
import operator
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

from agentrt.bench.harness import BenchResult, benchmark
from agentrt.graph._scatter import gather_map

__all__ = ["OverheadOptions", "run_overhead"]


async def _zero(x: int) -> int:
    return x


async def _yield_once(x: int) -> int:
    await asyncio.sleep(0)
    return x


async def _agentrt_yielding(n: int, limit: int) -> int:
    return len(await gather_map(_yield_once, range(n), limit=limit))


async def _gather_yielding(n: int, limit: int) -> int:
    return len(await asyncio.gather(*(_yield_once(i) for i in range(n))))


async def _agentrt(n: int, limit: int) -> int:
    outs = await gather_map(_zero, range(n), limit=limit)
    return len(outs)


async def _gather(n: int, limit: int) -> int:
    return len(await asyncio.gather(*(_zero(i) for i in range(n))))


# LangGraph reads these type hints at run time, so they live at module level.
class _State(TypedDict):
    n: int
    results: Annotated[list[int], operator.add]


class _Item(TypedDict):
    x: int


async def _lg_work(item: _Item) -> dict[str, list[int]]:
    return {"results": [item["x"]]}


def _langgraph_runner() -> Callable[[int, int], Awaitable[int]] | None:
    try:
        from langgraph.graph import END, START, StateGraph
        from langgraph.types import Send
    except ImportError:
        return None

    def fan_out(state: _State) -> list[Send]:
        return [Send("work", {"x": i}) for i in range(state["n"])]

    g: Any = StateGraph(_State)
    g.add_node("work", _lg_work)
    g.add_conditional_edges(START, fan_out, ["work"])
    g.add_edge("work", END)
    app = g.compile()

    async def run(n: int, limit: int) -> int:
        out = await app.ainvoke({"n": n, "results": []}, {"recursion_limit": 10})
        return len(out["results"])

    return run


@dataclass(frozen=True, slots=True)
class OverheadOptions:
    sizes: tuple[int, ...] = (1000, 10000, 100000)  # n: calls per map
    limit: int = 64  # gather_map's workers
    rounds: int = 3
    langgraph_max_n: int = 10000  # LangGraph is skipped above this n


async def _cpu_us_per_call(fn: Callable[[int, int], Awaitable[int]], n: int, limit: int) -> float:
    gc.collect()
    t0 = time.process_time()
    got = await fn(n, limit)
    spent = time.process_time() - t0
    if got != n:
        raise AssertionError(f"expected {n} results, got {got}")
    return spent / n * 1e6


@benchmark(
    "overhead",
    "CPU µs per scheduled zero-latency call: agentrt map vs asyncio.gather vs LangGraph Send",
    OverheadOptions,
)
async def run_overhead(opts: OverheadOptions) -> BenchResult:
    sizes = opts.sizes
    limit, rounds = opts.limit, opts.rounds
    lg_max = opts.langgraph_max_n
    lg = _langgraph_runner()
    ours: list[float] = []
    floor: list[float] = []
    theirs: list[float | None] = []
    ours_y: list[float] = []
    floor_y: list[float] = []
    for n in sizes:
        ours_y.append(round(await _cpu_us_per_call(_agentrt_yielding, n, limit), 3))
        floor_y.append(round(await _cpu_us_per_call(_gather_yielding, n, limit), 3))
        # interleaved rounds, best of each: the least-disturbed measurement
        a, b = [], []
        for _ in range(rounds):
            a.append(await _cpu_us_per_call(_agentrt, n, limit))
            b.append(await _cpu_us_per_call(_gather, n, limit))
        ours.append(round(min(a), 3))
        floor.append(round(min(b), 3))
        if lg is not None and n <= lg_max:
            theirs.append(round(await _cpu_us_per_call(lg, n, limit), 3))
        else:
            theirs.append(None)
    ratios = [
        (f"langgraph/agentrt at n={n}", t / o)
        for n, o, t in zip(sizes, ours, theirs, strict=True)
        if t
    ]
    ratios += [
        (f"agentrt/gather at n={n}", o / f) for n, o, f in zip(sizes, ours, floor, strict=True)
    ]
    measured_lg = [(o, t) for o, t in zip(ours, theirs, strict=True) if t is not None]
    checks = [
        ("agentrt ≤ 30 µs per call at every n", all(o <= 30 for o in ours)),
        (
            "agentrt per-call cost not growing with n (largest n ≤ 1.5× smallest)",
            ours[-1] <= 1.5 * ours[0],
        ),
    ]
    if measured_lg:
        checks.append(
            ("≥ 10× below LangGraph at every measured n", all(t >= 10 * o for o, t in measured_lg))
        )
    notes = [
        f"agentrt: gather_map with limit={limit} workers; best of {rounds} interleaved rounds",
        "*_yielding_us: the same with calls that suspend once (asyncio.sleep(0)), one round",
        "LangGraph: one ainvoke of a StateGraph whose START edge returns n Send()s, "
        "reduced with operator.add; one round",
    ]
    if lg is None:
        notes.append(
            "langgraph is not installed (pip install 'fixbugs[bench]'): its column is null"
        )
    elif any(n > lg_max for n in sizes):
        notes.append(
            f"LangGraph skipped above n={lg_max} (its cost grows with n; "
            "--set langgraph_max_n=100000 to run it)"
        )
    return BenchResult(
        name="overhead",
        figures={
            "n": sizes,
            "agentrt_us": ours,
            "gather_us": floor,
            "langgraph_us": theirs,
            "langgraph_available": lg is not None,
            "agentrt_yielding_us": ours_y,
            "gather_yielding_us": floor_y,
        },
        ratios=tuple(ratios),
        checks=tuple(checks),
        notes=tuple(notes),
    )
