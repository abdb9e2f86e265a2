"""The service's traces and metrics, fed from each finished run's report.

A report holds its call records and stage events, so a run is traced and
measured from the report alone, in whichever process finished it. The
queue's figures per stage (queued, in flight, dead-lettered, oldest age)
are read from the queue's store when ``/metrics`` is scraped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from agentrt.llm import ChatModel
from agentrt.metrics import CallRecord
from agentrt.observability import (
    FlowState,
    LiveState,
    RuntimeMetrics,
    TracingConfig,
    emit_run_spans,
    flow_state,
    tracer_provider,
)
from fixbugs.run.report_schema import ReportModel
from fixbugs.service.jobs import JobService

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

__all__ = ["ServiceTelemetry", "stage_spans"]


def stage_spans(report: ReportModel) -> dict[str, tuple[float, float]]:
    """Each stage's (start, end) on the run's timeline, from its events."""
    spans: dict[str, list[float]] = {}
    for ev in report.events:
        if ev.kind == "stage_started":
            spans[ev.stage] = [ev.at_s, ev.at_s]
        elif ev.kind == "stage_finished" and ev.stage in spans:
            spans[ev.stage][1] = ev.at_s
    return {k: (a, b) for k, (a, b) in spans.items()}


class ServiceTelemetry:
    """Spans per run (when an exporter is configured) and the ``/metrics`` registry."""

    def __init__(
        self,
        tracing: TracingConfig | None = None,
        clients: Sequence[ChatModel] = (),
        *,
        provider: TracerProvider | None = None,
    ) -> None:
        tracing = tracing or TracingConfig(service_name="fixbugs")
        self.provider = provider
        if self.provider is None and tracing.exporter != "none":
            self.provider = tracer_provider(tracing)
        self.tracer = self.provider.get_tracer("fixbugs.service") if self.provider else None
        self.clients = tuple(clients)
        self._live = LiveState()
        self.metrics = RuntimeMetrics(state=lambda: self._live)
        self._rejected_seen = 0

    def flow(self) -> FlowState:
        return flow_state(self.clients)

    def run_finished(self, job: str, report: ReportModel) -> None:
        try:
            records = [CallRecord.from_dict(dict(c)) for c in report.calls]
            walls = {k: v.wall_s for k, v in report.stages.items()}
            self.metrics.observe_run(records, walls)
            if self.tracer is not None:
                emit_run_spans(
                    self.tracer,
                    records,
                    run_name="fixbugs",
                    stage_walls=stage_spans(report),
                    attributes={
                        "fixbugs.job": job,
                        "fixbugs.validated": report.validated,
                    },
                )
        except (KeyError, TypeError, ValueError):  # a malformed call record is not worth a crash
            return

    def exposition_for(self, service: JobService) -> Callable[[], Awaitable[tuple[bytes, str]]]:
        async def expose() -> tuple[bytes, str]:
            snap = await service.snapshot()
            # read from the store on each scrape, off the collector (which is
            # synchronous): a process without workers on a shared queue
            # exports every worker's stages, which is what autoscaling reads
            queue = await service.backend.stats(service.stage_names)
            depths = {st.stage: st.live for st in queue.stages}  # each stage is bounded
            self._live = LiveState(
                queue_depths=depths,
                queue_capacity=dict.fromkeys(depths, snap.queue.capacity),
                workers_busy=snap.workers.busy,
                workers=snap.workers.slots,
                flow=flow_state(self.clients),
                queue=queue,
            )
            if service.rejected > self._rejected_seen:
                self.metrics.rejected.inc(service.rejected - self._rejected_seen)
                self._rejected_seen = service.rejected
            return self.metrics.exposition()

        return expose

    def shutdown(self) -> None:
        if self.provider is not None:
            self.provider.shutdown()
