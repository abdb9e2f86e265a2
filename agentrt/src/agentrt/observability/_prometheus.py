"""Prometheus metrics: stage latencies and call figures, plus live state on scrape.

Histograms and counters are fed from finished runs' call records and stage
walls (:meth:`RuntimeMetrics.observe_run`); gauges of the moment — queue
depths, workers busy, limits in force, retry budget use — are read from a
``state`` callback when Prometheus scrapes, so they are never stale.

A queue's figures per stage (:class:`~agentrt.queues.QueueStats`: queued, in
flight, dead-lettered, the oldest live message's age) are what an autoscaler
of workers reads; whoever serves the scrape reads them from the store, so a
process without workers on a shared store exports the whole deployment's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from agentrt.metrics._record import CallRecord
from agentrt.observability._flow import FlowState
from agentrt.queues._types import QueueStats, StageStats

__all__ = ["LiveState", "RuntimeMetrics"]

_STAGE_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800)
_CALL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


@dataclass(frozen=True, slots=True)
class LiveState:
    """The gauges' values at one instant."""

    queue_depths: Mapping[str, int] = field(default_factory=dict)
    queue_capacity: Mapping[str, int] = field(default_factory=dict)
    workers_busy: int = 0
    workers: int = 0
    flow: FlowState | None = None
    queue: QueueStats | None = None  # None: the queue's figures are not exported


def _queue_families(stats: QueueStats) -> Iterator[Metric]:
    """``agentrt_queue_*{stage}`` beside ``agentrt_queue_depth`` (= queued + in flight)."""
    families: tuple[tuple[str, str, Callable[[StageStats], float]], ...] = (
        ("agentrt_queue_queued", "Messages ready for a worker (not leased)", lambda s: s.queued),
        ("agentrt_queue_in_flight", "Messages leased to a worker now", lambda s: s.in_flight),
        ("agentrt_queue_dead_letters", "Dead-lettered messages, for a person", lambda s: s.dead),
        (
            "agentrt_queue_oldest_age_seconds",
            "Seconds since the oldest queued or in-flight message entered the stage (0: none)",
            lambda s: s.oldest_age_s or 0.0,
        ),
    )
    for name, doc, value in families:
        g = GaugeMetricFamily(name, doc, labels=["stage"])
        for st in stats.stages:
            g.add_metric([st.stage], value(st))
        yield g


class _LiveCollector(Collector):
    def __init__(self, state: Callable[[], LiveState]) -> None:
        self._state = state

    def collect(self) -> Iterator[Metric]:
        s = self._state()
        depth = GaugeMetricFamily(
            "agentrt_queue_depth", "Live messages (queued + running)", labels=["stage"]
        )
        for k, v in s.queue_depths.items():
            depth.add_metric([k], v)
        cap = GaugeMetricFamily("agentrt_queue_capacity", "Queue bound", labels=["stage"])
        for k, v in s.queue_capacity.items():
            cap.add_metric([k], v)
        busy = GaugeMetricFamily("agentrt_workers_busy", "Worker slots running a stage")
        busy.add_metric([], s.workers_busy)
        slots = GaugeMetricFamily("agentrt_workers", "Worker slots")
        slots.add_metric([], s.workers)
        yield from (depth, cap, busy, slots)
        if s.queue is not None:
            yield from _queue_families(s.queue)
        limit = GaugeMetricFamily(
            "agentrt_concurrency_limit", "Concurrency limit in force", labels=["client"]
        )
        in_use = GaugeMetricFamily(
            "agentrt_concurrency_in_use", "Calls holding a permit", labels=["client"]
        )
        for ls in s.flow.limits if s.flow else ():
            limit.add_metric([ls.client], ls.limit)
            in_use.add_metric([ls.client], ls.in_use)
        yield from (limit, in_use)
        rb = s.flow.retry_budget if s.flow else None
        if rb is not None:
            for name, doc, value in (
                ("agentrt_retry_budget_retrying", "Retries in progress", rb.retrying),
                ("agentrt_retry_budget_in_flight_cap", "Retries allowed at once", rb.in_flight_cap),
                ("agentrt_retry_budget_balance", "Retries the allowance holds", rb.balance),
                ("agentrt_retry_budget_denied", "Retries the budget refused", rb.denied),
            ):
                g = GaugeMetricFamily(name, doc)
                g.add_metric([], value)
                yield g


class RuntimeMetrics:
    """One registry per service; :meth:`exposition` is what ``/metrics`` returns."""

    def __init__(
        self,
        state: Callable[[], LiveState] | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.stage_seconds = Histogram(
            "agentrt_stage_seconds",
            "Stage wall time per run",
            ["stage"],
            buckets=_STAGE_BUCKETS,
            registry=r,
        )
        self.call_seconds = Histogram(
            "agentrt_call_seconds",
            "Call wall time",
            ["stage", "kind"],
            buckets=_CALL_BUCKETS,
            registry=r,
        )
        self.ttft_seconds = Histogram(
            "agentrt_ttft_seconds",
            "Model time to first token",
            ["stage"],
            buckets=_CALL_BUCKETS,
            registry=r,
        )
        self.tokens = Counter("agentrt_tokens", "Model tokens", ["stage", "direction"], registry=r)
        self.calls = Counter(
            "agentrt_calls", "Calls by outcome", ["stage", "kind", "outcome"], registry=r
        )
        self.retries = Counter(
            "agentrt_retries", "Extra attempts beyond the first", ["stage"], registry=r
        )
        self.runs = Counter("agentrt_runs", "Finished runs", registry=r)
        self.rejected = Counter("agentrt_rejected", "Submissions refused (queue full)", registry=r)
        if state is not None:
            r.register(_LiveCollector(state))

    def observe_run(self, records: Sequence[CallRecord], stage_walls: Mapping[str, float]) -> None:
        for name, wall in stage_walls.items():
            self.stage_seconds.labels(name).observe(wall)
        for c in records:
            self.call_seconds.labels(c.stage, c.kind).observe(c.wall_s)
            self.calls.labels(c.stage, c.kind, c.outcome).inc()
            if c.attempts > 1:
                self.retries.labels(c.stage).inc(c.attempts - 1)
            if c.kind == "model":
                if c.ttft_s is not None:
                    self.ttft_seconds.labels(c.stage).observe(c.ttft_s)
                self.tokens.labels(c.stage, "input").inc(c.input_tokens)
                self.tokens.labels(c.stage, "output").inc(c.output_tokens)
        self.runs.inc()

    def exposition(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
