"""Patch naturalness: how likely the embedded model finds the patched lines.

Real fixes tend to look like ordinary code; many wrong candidates do not
(``not (...)`` around a whole rule, a literal pasted mid-word). The small
model cannot write fixes, but scoring text is cheap for it: the mean token
log-probability of the changed lines, after the same few lines of context,
patched against original. The ratio becomes a ranking factor in
``[0.5, 1.5]``. Optional: with no local model it is simply skipped.
"""

from __future__ import annotations

import difflib
import math
import time
from collections.abc import Sequence

from agentrt.llm import ChatModel, token_scorer
from fixbugs.repair.ranking import RepairCandidate

__all__ = ["naturalness_factors"]

_CONTEXT_LINES = 3


def _regions(old: str, new: str) -> tuple[str, str, str] | None:
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    ops = [
        o
        for o in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
        if o[0] != "equal"
    ]
    if not ops:
        return None
    i1, i2, j1, j2 = ops[0][1], ops[-1][2], ops[0][3], ops[-1][4]
    prefix = "".join(a[max(0, i1 - _CONTEXT_LINES) : i1])
    return prefix, "".join(a[i1:i2]), "".join(b[j1:j2])


async def naturalness_factors(
    client: ChatModel,
    cands: Sequence[RepairCandidate],
    texts: dict[str, str],
    *,
    top: int = 8,
    budget_s: float = 15.0,
) -> dict[int, float]:
    """``candidate id -> factor`` for the ``top`` candidates (empty without a local model).

    The model is the client's :class:`~agentrt.llm.TokenScorer`, found under
    its wrappers; a hosted endpoint has none.
    """
    scorer = token_scorer(client)
    if scorer is None:
        return {}
    jobs = []
    for c in cands[:top]:
        r = _regions(texts.get(c.path, ""), c.new_text)
        if r is not None and r[1].strip() and r[2].strip():
            jobs.append((c.id, r))

    out: dict[int, float] = {}
    cache: dict[tuple[str, str], float] = {}
    stop_at = time.monotonic() + budget_s  # cheap or nothing: never the run's bottleneck
    for cid, (prefix, before, after) in jobs:
        if time.monotonic() > stop_at:
            break
        if (prefix, before) not in cache:
            cache[(prefix, before)] = await scorer.score(prefix, before)
        delta = await scorer.score(prefix, after) - cache[(prefix, before)]
        out[cid] = max(0.5, min(1.5, math.exp(delta / 2)))
    return out
