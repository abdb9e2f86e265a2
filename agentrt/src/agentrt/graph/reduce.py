"""Hierarchical reduce: when gathered evidence exceeds one call's context budget.

One reduce call can only read so much. When the items do not fit, they are
packed in order into groups under the budget, each group is reduced by its
own call (concurrently, through scatter-gather), and the partial results are
reduced again, level by level, until one group fits and a final call
produces the answer. :func:`plan_level` is the pure planning step.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from agentrt.chunking.packing import pack_greedy
from agentrt.errors import AgentrtError
from agentrt.graph.scatter import gather_map

__all__ = ["ReduceError", "ReduceResult", "hierarchical_reduce", "plan_level"]

T = TypeVar("T")


class ReduceError(AgentrtError):
    """The reduce cannot make progress (its outputs do not shrink)."""


@dataclass(frozen=True, slots=True)
class ReduceResult(Generic[T]):
    value: T
    levels: int  # reduce levels before the final call
    calls: int  # reduce calls, the final one included


def plan_level(sizes: Sequence[int], budget: int) -> list[range] | None:
    """Groups for the next level, or None when everything fits one final call."""
    if sum(sizes) <= budget:
        return None
    return pack_greedy(sizes, budget)


async def hierarchical_reduce(
    items: Sequence[T],
    combine: Callable[[list[T]], Awaitable[T]],
    *,
    size: Callable[[T], int],
    budget: int,
    limit: int = 16,
    max_levels: int = 8,
) -> ReduceResult[T]:
    """Reduce ``items`` with ``combine`` so that no call reads more than ``budget``.

    ``size`` measures an item in tokens; ``combine`` must return something
    smaller than its inputs (a summary), or :class:`ReduceError` is raised
    after ``max_levels`` levels. A lone item in a group is passed up as is.
    """
    level = list(items)
    calls = 0
    for depth in range(max_levels + 1):
        groups = plan_level([size(x) for x in level], budget)
        if groups is None:
            return ReduceResult(await combine(level), depth, calls + 1)
        merge = [g for g in groups if len(g) > 1 or size(level[g[0]]) > budget]
        outcomes = await gather_map(
            combine, [[level[i] for i in g] for g in merge], limit=limit, on_error="raise"
        )
        calls += len(merge)
        merged = {g.start: o.unwrap() for g, o in zip(merge, outcomes, strict=True)}
        level = [merged[g.start] if g.start in merged else level[g.start] for g in groups]
    raise ReduceError(
        f"evidence still exceeds the {budget}-token budget after {max_levels} reduce levels; "
        "the reduce step must return less than it reads"
    )
