"""A run's timeline as data: Gantt rows, and throughput/latency by concurrency.

Pure functions of the call records, so the figures are testable without
drawing anything. Concurrency is what the run itself experienced: the
number of calls in flight, swept over the timeline.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentrt.metrics._record import CallRecord
from agentrt.metrics._recorder import percentile

__all__ = ["ConcurrencyPoint", "GanttBar", "Run", "concurrency_profile", "gantt", "load_run_obj"]


@dataclass(frozen=True, slots=True)
class Run:
    """What a report needs of a recorded run."""

    title: str
    calls: tuple[CallRecord, ...]
    stage_spans: Mapping[str, tuple[float, float]]


@dataclass(frozen=True, slots=True)
class GanttBar:
    row: str  # the stage
    start: float
    end: float
    kind: str  # "stage", "model" or "tool"
    label: str
    failed: bool = False


@dataclass(frozen=True, slots=True)
class ConcurrencyPoint:
    """Figures over the time the run had ``level`` calls in flight."""

    level: int
    seconds: float  # time spent at this level
    calls_started: int
    latency_p50_s: float | None  # wall of calls started at this level
    latency_p95_s: float | None
    output_tps: float  # output tokens per second decoded, all calls together


def load_run_obj(obj: Mapping[str, Any]) -> Run:
    """A FixBugs report, an agentrt metrics JSON, or anything with ``calls``."""
    calls = tuple(CallRecord.from_dict(dict(c)) for c in obj.get("calls", ()))
    spans: dict[str, tuple[float, float]] = {}
    for ev in obj.get("events", ()):
        if ev.get("kind") == "stage_started":
            spans[ev["stage"]] = (ev["at_s"], ev["at_s"])
        elif ev.get("kind") == "stage_finished" and ev.get("stage") in spans:
            spans[ev["stage"]] = (spans[ev["stage"]][0], ev["at_s"])
    return Run(str(obj.get("title") or "run"), calls, spans)


def gantt(run: Run) -> list[GanttBar]:
    """Stage bars (from their spans, else their calls' extent) and one bar per call."""
    rows: dict[str, None] = dict.fromkeys(run.stage_spans)
    for c in run.calls:
        rows.setdefault(c.stage, None)
    bars: list[GanttBar] = []
    for stage in rows:
        mine = [c for c in run.calls if c.stage == stage]
        if stage in run.stage_spans:
            s, e = run.stage_spans[stage]
        else:
            s, e = min(c.started_at for c in mine), max(c.ended_at for c in mine)
        bars.append(GanttBar(stage, s, e, "stage", stage))
        bars += [
            GanttBar(stage, c.started_at, c.ended_at, c.kind, c.name, c.outcome == "error")
            for c in mine
        ]
    return bars


def concurrency_profile(calls: Sequence[CallRecord]) -> list[ConcurrencyPoint]:
    """Sweep the timeline; per in-flight level, time spent, latency and output rate."""
    if not calls:
        return []
    points = sorted({c.started_at for c in calls} | {c.ended_at for c in calls})
    seconds: dict[int, float] = {}
    tokens: dict[int, float] = {}
    for a, b in itertools.pairwise(points):
        live = [c for c in calls if c.started_at <= a and c.ended_at >= b and c.wall_s > 0]
        if not live:
            continue
        k = len(live)
        seconds[k] = seconds.get(k, 0.0) + (b - a)
        tokens[k] = tokens.get(k, 0.0) + sum(c.output_tokens / c.wall_s for c in live) * (b - a)
    started: dict[int, list[float]] = {}
    for c in calls:
        level = sum(1 for o in calls if o.started_at <= c.started_at < o.ended_at) or 1
        started.setdefault(level, []).append(c.wall_s)
    out = []
    for k in sorted(set(seconds) | set(started)):
        walls = started.get(k, [])
        secs = seconds.get(k, 0.0)
        out.append(
            ConcurrencyPoint(
                level=k,
                seconds=round(secs, 6),
                calls_started=len(walls),
                latency_p50_s=percentile(walls, 50),
                latency_p95_s=percentile(walls, 95),
                output_tps=tokens.get(k, 0.0) / secs if secs > 0 else 0.0,
            )
        )
    return out
