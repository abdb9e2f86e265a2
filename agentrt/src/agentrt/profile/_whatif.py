"""What a change would buy a stage, estimated from the latency model — and when it won't.

Profile before parallelizing: more parallelism helps only independent
calls with enough model time each, and not a stage that waits on I/O. Each
estimate carries the assumptions it rests on, so a reader can reject the
number along with them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agentrt.profile._breakdown import RunBreakdown, StageBreakdown

__all__ = ["Estimate", "WhatIf", "estimates"]

# Below this much model time per call, fan-out overhead (scheduling, TTFT
# base, a reduce step) eats the gain.
MIN_MODEL_S_PER_CALL = 0.1


@dataclass(frozen=True, slots=True)
class WhatIf:
    """The knobs of the estimates."""

    parallel: int = 16  # calls in flight at once under "more parallelism"
    smaller_speedup: float = 3.0  # prefill and decode speed of the smaller model, × current
    cached_share: float = 0.8  # share of input a prefix-stable layout lets the cache serve


@dataclass(frozen=True, slots=True)
class Estimate:
    """One change to one stage: its time now and estimated after, or why it won't help."""

    stage: str
    change: str
    current_s: float
    estimate_s: float | None  # None when the change would not help
    assumptions: tuple[str, ...]
    note: str = ""
    unknown: bool = False  # the run did not measure what the estimate needs (see note)

    @property
    def helps(self) -> bool:
        return self.estimate_s is not None and self.estimate_s < self.current_s * 0.95


def _parallelism(s: StageBreakdown, w: WhatIf) -> Estimate:
    name = f"parallelism x{w.parallel}"
    if s.model_calls == 0:
        return Estimate(s.stage, name, s.span_s, None, (), "no model calls: tool work only")
    if s.tool_s > s.model_s:
        share = s.tool_s / (s.tool_s + s.model_s)
        return Estimate(
            s.stage,
            name,
            s.span_s,
            None,
            (),
            f"I/O-bound: {share:.0%} of the stage is tool waits (retrieval, I/O), not model "
            "time; parallelize or cache the I/O instead",
        )
    if s.model_calls == 1:
        return Estimate(
            s.stage,
            name,
            s.span_s,
            None,
            (),
            "one model call: nothing to run side by side unless its input is split into "
            "independent chunks",
        )
    if s.model_s_per_call < MIN_MODEL_S_PER_CALL:
        return Estimate(
            s.stage,
            name,
            s.span_s,
            None,
            (),
            f"calls take {s.model_s_per_call * 1e3:.0f} ms of model time each, under "
            f"{MIN_MODEL_S_PER_CALL * 1e3:.0f} ms: fan-out overhead would eat the gain",
        )
    per_call = (s.service_s + s.retry_s) / s.model_calls
    waves = math.ceil(s.model_calls / w.parallel)
    est = waves * per_call + s.tool_s / min(w.parallel, max(1, s.tool_calls))
    assumptions = (
        f"the {s.model_calls} calls are independent of each other",
        f"the endpoint serves {w.parallel} calls at once at full per-stream speed (no queueing)",
        f"each call takes what it took here, {per_call:.2f} s on average",
    )
    note = ""
    if s.chained:
        note = (
            "calls ran one after another, each starting when the previous ended: if each "
            "needs the previous answer (dependent steps), parallelism cannot help"
        )
    if est >= s.span_s * 0.95:
        note = note or f"already running {s.concurrency:.1f} calls at once"
    return Estimate(s.stage, name, s.span_s, est, assumptions, note)


def _not_measured(s: StageBreakdown, change: str, current: float) -> Estimate:
    return Estimate(
        s.stage,
        change,
        current,
        None,
        (),
        "unknown: the run measured no TTFT (no streamed call), so prefill and decode "
        "cannot be told apart; stream one call of the stage to measure them",
        unknown=True,
    )


def _streaming(s: StageBreakdown) -> Estimate | None:
    if s.model_calls == 0:
        return None
    if s.unsplit_s > 0:
        return _not_measured(s, "streaming on", s.service_s / s.model_calls)
    first_stream = s.prefill_s / s.model_calls  # first output at TTFT
    whole = (s.prefill_s + s.decode_s) / s.model_calls  # first output at the end
    if s.streamed_calls < s.model_calls:
        return Estimate(
            s.stage,
            "streaming on",
            whole,
            first_stream,
            (
                "figures are the time to first visible output per call, not total time",
                "total time stays about the same (streaming overhead aside)",
            ),
            "helps a person watching; internal calls gain nothing in total time",
        )
    return Estimate(
        s.stage,
        "streaming off",
        first_stream,
        whole,
        ("figures are the time to first visible output per call", "total time unchanged"),
        "only worth it for internal calls nobody watches",
    )


def _smaller(s: StageBreakdown, w: WhatIf) -> Estimate | None:
    if s.model_calls == 0:
        return None
    saved = s.service_s * (1 - 1 / w.smaller_speedup)
    est = max(0.0, s.span_s - saved / max(1.0, s.concurrency))
    return Estimate(
        s.stage,
        "smaller model",
        s.span_s,
        est,
        (
            f"prefill and decode {w.smaller_speedup:g}x faster (e.g. an 8B model for a 70B one)",
            "queueing, retries and tool waits unchanged; answer quality not estimated",
        ),
    )


def _prefix(s: StageBreakdown, run: RunBreakdown, w: WhatIf) -> Estimate | None:
    if s.model_calls == 0 or s.input_tokens == 0:
        return None
    if s.unsplit_s > 0:
        return _not_measured(s, "prefix caching", s.span_s)
    now = s.cached_tokens / s.input_tokens
    if now >= w.cached_share:
        return Estimate(s.stage, "prefix caching", s.span_s, None, (), f"already {now:.0%} cached")
    saved_tokens = s.input_tokens * (w.cached_share - now)
    saved = min(s.prefill_s, saved_tokens * run.latency.prefill_s_per_token)
    est = max(0.0, s.span_s - saved / max(1.0, s.concurrency))
    note = ""
    if s.prefill_s < 0.1 * (s.model_s or 1.0):
        note = f"prefill is {s.prefill_s / (s.model_s or 1.0):.0%} of model time: little to gain"
    return Estimate(
        s.stage,
        "prefix caching",
        s.span_s,
        est,
        (
            f"prompts laid out prefix-stable so {w.cached_share:.0%} of input is served "
            f"from cache (now {now:.0%})",
            f"cached tokens cost no prefill; prefill {run.latency.prefill_s_per_token * 1e3:.3f} "
            "ms/token from the latency model",
        ),
        note,
    )


def estimates(run: RunBreakdown, whatif: WhatIf | None = None) -> list[Estimate]:
    """Every change's estimate for every stage, stage by stage."""
    w = whatif or WhatIf()
    out: list[Estimate] = []
    for s in run.stages:
        out.append(_parallelism(s, w))
        for e in (_streaming(s), _smaller(s, w), _prefix(s, run, w)):
            if e is not None:
                out.append(e)
    return out
