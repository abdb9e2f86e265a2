"""Work on many files, spread across worker processes (``python -m fixbugs.index.worker``).

A worker is a fresh interpreter that imports only the index's parsing
modules (see :mod:`fixbugs.index.childenv`): it starts fast, inherits
nothing of this process, and answers with rows the caller validates like
cache rows. Batches are balanced by bytes, biggest files first; a batch
whose worker fails is done in this process, with a note, so a worker can
make a build faster, never wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from fixbugs.index.childenv import run_own_module

__all__ = ["POOL_MIN_FILES", "spread", "worker_rows"]

POOL_MIN_FILES = 200  # fewer files than this: done here, a worker costs more
_WORKER_TIMEOUT_S = 600.0

I = TypeVar("I")  # noqa: E741
R = TypeVar("R")


def worker_rows(
    args: Sequence[str], items: Sequence[Sequence[object]], per_item: int
) -> list[tuple[str, ...]] | None:
    """``per_item`` output lines of one worker for each item (each sent as one JSON
    line), in order; None if the worker failed or answered short."""
    stdin = "".join(json.dumps(list(item), ensure_ascii=False) + "\n" for item in items)
    done = run_own_module(
        "fixbugs.index.worker",
        args,
        stdin=stdin.encode("utf-8", "surrogatepass"),
        timeout_s=_WORKER_TIMEOUT_S,
    )
    if not done.ok:
        return None
    lines = done.stdout.decode("utf-8", "surrogatepass").split("\n")
    if len(lines) < per_item * len(items):
        return None
    return [tuple(lines[per_item * i : per_item * (i + 1)]) for i in range(len(items))]


def spread(
    items: Sequence[I],
    *,
    size: Callable[[I], int],
    workers: int,
    in_worker: Callable[[list[I]], list[R] | None],
    here: Callable[[I], R],
    notes: list[str],
) -> list[R]:
    """``here(item)`` of every item, in order, or ``in_worker``'s answers for batches of
    them when there are many (``in_worker`` answers None when its worker failed)."""
    if workers <= 1 or len(items) < POOL_MIN_FILES:
        return [here(item) for item in items]
    order = sorted(range(len(items)), key=lambda i: -size(items[i]))
    batches: list[list[int]] = [[] for _ in range(workers)]
    sizes = [0] * workers
    for i in order:
        w = sizes.index(min(sizes))
        batches[w].append(i)
        sizes[w] += size(items[i]) + 1
    out: list[R | None] = [None] * len(items)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda b: in_worker([items[i] for i in b]), batches))
    for batch, done in zip(batches, results, strict=True):
        if done is None:
            notes.append(f"an index worker failed; {len(batch)} file(s) done in this process")
            done = [here(items[i]) for i in batch]
        for i, r in zip(batch, done, strict=True):
            out[i] = r
    return [r for r in out if r is not None]
