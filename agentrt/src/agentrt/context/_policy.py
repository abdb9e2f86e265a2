"""Keep, park or recompute: what to do with a session's context while it waits on a tool.

An agent session's KV cache stays resident through every tool wait, and
holding it costs the scarcest memory there is; dropping it costs a prefill
when the session resumes; parking it (save to host memory or disk, restore
later) costs two copies. InferCept (Abhyankar et al., 2024) chooses among
preserve, discard and swap per interception by the waste each would cause;
this module is that choice as a pure function of measured costs, all in
seconds of engine time:

* keep:      ``wait_s × demand × kv_share`` — the engine time others lose
  because this context holds memory they would use (``demand``: the share
  of the wait during which other sessions want the engine; ``kv_share``:
  the share of the engine's KV memory this context holds — 1 for an
  embedded llama.cpp model, which holds one context at a time);
* park:      save + restore time of this context's state;
* recompute: prefill time of this context when the session resumes.

:class:`CostMeter` learns the three cost lines from what the runtime
measured, so the choice follows this machine, not a guess.
"""

from __future__ import annotations

import collections
import statistics
from dataclasses import dataclass
from typing import Literal

__all__ = ["Choice", "CostMeter", "CostModel", "Decision", "LinearCost", "decide"]

Choice = Literal["keep", "park", "recompute"]


@dataclass(frozen=True, slots=True)
class LinearCost:
    """``base_s + tokens × per_token_s`` seconds."""

    base_s: float = 0.0
    per_token_s: float = 0.0

    def __call__(self, tokens: int) -> float:
        return self.base_s + tokens * self.per_token_s


@dataclass(frozen=True, slots=True)
class CostModel:
    """Measured cost lines of one engine (defaults: a small model on a laptop CPU)."""

    prefill: LinearCost = LinearCost(0.0, 2e-3)
    save: LinearCost = LinearCost(2e-3, 2e-5)
    restore: LinearCost = LinearCost(2e-3, 2e-5)

    def recompute_s(self, tokens: int) -> float:
        return self.prefill(tokens)

    def park_s(self, tokens: int) -> float:
        return self.save(tokens) + self.restore(tokens)


@dataclass(frozen=True, slots=True)
class Decision:
    """The choice and the estimated cost of each option, in engine seconds."""

    choice: Choice
    keep_s: float
    park_s: float
    recompute_s: float
    reason: str

    def cost(self, choice: Choice) -> float:
        return {"keep": self.keep_s, "park": self.park_s, "recompute": self.recompute_s}[choice]


def decide(
    costs: CostModel,
    context_tokens: int,
    *,
    wait_s: float,
    demand: float,
    kv_share: float = 1.0,
    can_park: bool = True,
) -> Decision:
    """The cheapest of keep, park and recompute for one tool wait.

    Ties go to the option that does less work (keep, then recompute, then
    park). ``can_park`` is false where the backend cannot save state.
    """
    if context_tokens < 0 or wait_s < 0:
        raise ValueError("context tokens and wait must not be negative")
    demand = min(1.0, max(0.0, demand))
    keep = wait_s * demand * min(1.0, max(0.0, kv_share))
    recompute = costs.recompute_s(context_tokens)
    park = costs.park_s(context_tokens) if can_park else float("inf")
    options: list[tuple[float, Choice]] = [(keep, "keep"), (recompute, "recompute"), (park, "park")]
    _, best = min(options, key=lambda o: o[0])  # min keeps the first of equals
    reason = (
        f"{context_tokens} tokens, {wait_s:.3g} s wait at demand {demand:.2f}: "
        f"keep {keep:.3g} s, park {park:.3g} s, recompute {recompute:.3g} s"
    )
    return Decision(best, keep, park, recompute, reason)


class _Fit:
    """Least-squares line through the last ``window`` (tokens, seconds) samples."""

    def __init__(self, default: LinearCost, window: int) -> None:
        self.default = default
        self.samples: collections.deque[tuple[int, float]] = collections.deque(maxlen=window)

    def add(self, tokens: int, seconds: float) -> None:
        if tokens > 0 and seconds >= 0:
            self.samples.append((tokens, seconds))

    def line(self) -> LinearCost:
        if not self.samples:
            return self.default
        xs = [float(x) for x, _ in self.samples]
        ys = [y for _, y in self.samples]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        if sxx == 0:  # one size seen: a line through the origin
            return LinearCost(0.0, my / mx)
        slope = max(0.0, sum((x - mx) * (y - my) for x, y in self.samples) / sxx)
        return LinearCost(max(0.0, my - slope * mx), slope)


class CostMeter:
    """Learns an engine's :class:`CostModel` from measured prefills, saves and restores."""

    def __init__(self, default: CostModel | None = None, *, window: int = 32) -> None:
        d = default or CostModel()
        self._prefill = _Fit(d.prefill, window)
        self._save = _Fit(d.save, window)
        self._restore = _Fit(d.restore, window)

    def prefill(self, tokens: int, seconds: float) -> None:
        self._prefill.add(tokens, seconds)

    def save(self, tokens: int, seconds: float) -> None:
        self._save.add(tokens, seconds)

    def restore(self, tokens: int, seconds: float) -> None:
        self._restore.add(tokens, seconds)

    def model(self) -> CostModel:
        return CostModel(self._prefill.line(), self._save.line(), self._restore.line())
