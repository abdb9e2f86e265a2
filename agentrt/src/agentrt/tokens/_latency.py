"""The latency model the design rests on: T ≈ TTFT + output tokens × time per token.

TTFT grows with the input (prefill): ``ttft = base + input_tokens × prefill``.
Decode emits tokens one by one at a per-stream rate. A fan-out of N calls
splits the output N ways, so its time is one TTFT plus the largest share
decoded at the per-stream rate, as long as the endpoint's shared capacity
(slots and aggregate tokens/s) holds N streams at full rate.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from agentrt.metrics._record import CallRecord

__all__ = ["FanoutEstimate", "LatencyModel", "calibrate"]


@dataclass(frozen=True, slots=True)
class FanoutEstimate:
    calls: int
    waves: int
    tokens_per_call: float
    per_stream_tps: float
    seconds: float


@dataclass(frozen=True, slots=True)
class LatencyModel:
    """Per-endpoint latency parameters (seconds, tokens per second)."""

    ttft_base_s: float = 0.5
    prefill_s_per_token: float = 0.05e-3
    decode_tps: float = 50.0

    def __post_init__(self) -> None:
        if self.decode_tps <= 0:
            raise ValueError("decode_tps must be positive")
        if self.ttft_base_s < 0 or self.prefill_s_per_token < 0:
            raise ValueError("TTFT parameters must not be negative")

    def ttft(self, input_tokens: int) -> float:
        return self.ttft_base_s + input_tokens * self.prefill_s_per_token

    def call_s(self, input_tokens: int, output_tokens: float) -> float:
        """Time of one call: TTFT + output tokens / decode rate."""
        return self.ttft(input_tokens) + output_tokens / self.decode_tps

    def fanout(
        self,
        total_output_tokens: float,
        calls: int,
        *,
        input_tokens_per_call: int = 0,
        slots: int | None = None,
        aggregate_tps: float | None = None,
    ) -> FanoutEstimate:
        """Time for ``calls`` concurrent calls sharing the output evenly.

        ``slots`` caps how many calls the endpoint serves at once (the rest
        wait for a later wave); ``aggregate_tps`` caps the endpoint's total
        decode rate, which the concurrent streams then share.
        """
        if calls < 1:
            raise ValueError("calls must be at least 1")
        concurrent = min(calls, slots) if slots else calls
        waves = math.ceil(calls / concurrent)
        per_stream = self.decode_tps
        if aggregate_tps is not None:
            per_stream = min(per_stream, aggregate_tps / concurrent)
        share = total_output_tokens / calls
        wave_s = self.ttft(input_tokens_per_call) + share / per_stream
        return FanoutEstimate(calls, waves, share, per_stream, waves * wave_s)


def calibrate(
    records: Sequence[CallRecord], *, default: LatencyModel | None = None
) -> LatencyModel:
    """Fit a latency model to measured calls.

    TTFT is fitted by least squares against input tokens (base and prefill
    slope; a constant when every call had the same input size); the decode
    rate is the median per-call rate. Calls without the needed figure are
    left out; parameters with no data keep ``default``'s values.
    """
    base = default or LatencyModel()
    pts = [
        (r.input_tokens, r.ttft_s) for r in records if r.ttft_s is not None and r.outcome == "ok"
    ]
    ttft_base, prefill = base.ttft_base_s, base.prefill_s_per_token
    if pts:
        xs = [float(x) for x, _ in pts]
        ys = [float(y) for _, y in pts]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        if sxx > 0:
            prefill = max(0.0, sum((x - mx) * (y - my) for x, y in pts) / sxx)
            ttft_base = max(0.0, my - prefill * mx)
        else:
            ttft_base = max(0.0, my - prefill * mx)
    rates = [r.decode_tps for r in records if r.decode_tps and r.outcome == "ok"]
    tps = statistics.median(rates) if rates else base.decode_tps
    return LatencyModel(ttft_base, prefill, tps)
