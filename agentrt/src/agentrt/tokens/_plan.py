"""`agentrt plan`: the single-call and fan-out estimates, with their assumptions."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentrt.tokens._latency import FanoutEstimate, LatencyModel

__all__ = ["Plan", "make_plan"]


@dataclass(frozen=True, slots=True)
class Plan:
    model: LatencyModel
    input_tokens: int
    output_tokens: int
    parallel: int
    single_s: float
    fanout: FanoutEstimate
    assumptions: tuple[str, ...] = field(default=())

    @property
    def speedup(self) -> float:
        return self.single_s / self.fanout.seconds if self.fanout.seconds else float("inf")

    def to_dict(self) -> dict[str, object]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "parallel": self.parallel,
            "ttft_base_s": self.model.ttft_base_s,
            "prefill_s_per_token": self.model.prefill_s_per_token,
            "tps": self.model.decode_tps,
            "single_call_s": self.single_s,
            "fanout_s": self.fanout.seconds,
            "fanout_waves": self.fanout.waves,
            "per_stream_tps": self.fanout.per_stream_tps,
            "speedup": self.speedup,
            "assumptions": list(self.assumptions),
        }


def make_plan(
    *,
    output_tokens: int,
    tps: float,
    parallel: int,
    input_tokens: int = 0,
    ttft_base_s: float = 0.5,
    prefill_ms_per_token: float = 0.05,
    slots: int | None = None,
    aggregate_tps: float | None = None,
) -> Plan:
    """Estimate one big call against ``parallel`` calls sharing the work.

    The input is split across the fan-out like the output (each call sees its
    chunk of the input), which is how scatter-gather chunks evidence.
    """
    if output_tokens < 0 or input_tokens < 0:
        raise ValueError("token counts must not be negative")
    if parallel < 1:
        raise ValueError("--parallel must be at least 1")
    model = LatencyModel(ttft_base_s, prefill_ms_per_token / 1000.0, tps)
    single = model.call_s(input_tokens, output_tokens)
    fan = model.fanout(
        output_tokens,
        parallel,
        input_tokens_per_call=-(-input_tokens // parallel),
        slots=slots,
        aggregate_tps=aggregate_tps,
    )
    assumptions = [
        f"TTFT = {ttft_base_s:g} s + input tokens x {prefill_ms_per_token:g} ms (prefill)",
        f"each stream decodes at {tps:g} tokens/s",
        f"the work splits evenly: {fan.tokens_per_call:,.0f} output tokens per call",
    ]
    if slots is None and aggregate_tps is None:
        assumptions.append(
            f"the endpoint serves {parallel} streams at once at full rate "
            "(give --slots / --aggregate-tps if it does not)"
        )
    else:
        assumptions.append(
            f"{min(parallel, slots or parallel)} calls run at once in {fan.waves} wave(s), "
            f"{fan.per_stream_tps:g} tokens/s per stream under the shared capacity"
        )
    assumptions.append("excluded: the final merge call and any retries")
    return Plan(model, input_tokens, output_tokens, parallel, single, fan, tuple(assumptions))
