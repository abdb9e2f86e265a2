"""Rich tables of call records and per-stage aggregates, for terminals."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.table import Table

from agentrt.metrics._record import CallRecord
from agentrt.metrics._recorder import StageStats

__all__ = ["calls_table", "stages_table"]


def _s(v: float | None, fmt: str = "{:.2f}") -> str:
    return "-" if v is None else fmt.format(v)


def calls_table(records: Iterable[CallRecord], title: str = "calls") -> Table:
    t = Table(title=title, caption="decode: measured from a stream; *: TTFT included")
    for col in (
        "stage",
        "call",
        "start s",
        "queue s",
        "TTFT s",
        "in tok",
        "out tok",
        "decode tok/s",
        "out tok/s*",
        "wall s",
        "outcome",
    ):
        t.add_column(col, justify="left" if col in {"stage", "call", "outcome"} else "right")
    for r in records:
        t.add_row(
            r.stage,
            r.name + (" (stream)" if r.streamed else ""),
            _s(r.started_at),
            _s(r.queue_wait_s),
            _s(r.ttft_s),
            str(r.input_tokens),
            str(r.output_tokens),
            _s(r.decode_tps, "{:.1f}"),
            _s(r.output_tps, "{:.1f}"),
            _s(r.wall_s),
            r.outcome if r.attempts == 1 else f"{r.outcome} ({r.attempts} attempts)",
        )
    return t


def stages_table(stats: Mapping[str, StageStats], title: str = "per stage") -> Table:
    t = Table(title=title)
    for col in (
        "stage",
        "calls",
        "attempts",
        "tools",
        "span s",
        "wall p50",
        "wall p95",
        "TTFT p50",
        "TTFT p95",
        "out tok",
        "stage tok/s",
        "fail %",
        "retry %",
    ):
        t.add_column(col, justify="left" if col == "stage" else "right")
    for s in stats.values():
        t.add_row(
            s.stage,
            str(s.model_calls),
            str(s.model_attempts),
            str(s.tool_calls),
            _s(s.span_s),
            _s(s.wall_p50_s),
            _s(s.wall_p95_s),
            _s(s.ttft_p50_s),
            _s(s.ttft_p95_s),
            str(s.output_tokens),
            _s(s.throughput_tps, "{:.1f}"),
            f"{100 * s.failure_rate:.0f}",
            f"{100 * s.retry_rate:.0f}",
        )
    return t
