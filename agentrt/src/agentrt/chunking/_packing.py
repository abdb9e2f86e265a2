"""Greedy packing of sized pieces, in order, under a budget.

The rule the code chunker packs files and their parts by: consecutive
pieces go into the same group while the group's total stays within the
budget; a piece larger than the budget on its own gets a group to itself
(the caller decides whether to split it further).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["pack_greedy"]


def pack_greedy(sizes: Sequence[int], budget: int) -> list[range]:
    """Index ranges of consecutive pieces whose sizes sum to at most ``budget``."""
    if budget < 1:
        raise ValueError("budget must be at least 1 token")
    groups: list[range] = []
    start, total = 0, 0
    for i, size in enumerate(sizes):
        if i > start and total + size > budget:
            groups.append(range(start, i))
            start, total = i, 0
        total += size
    if start < len(sizes):
        groups.append(range(start, len(sizes)))
    return groups
