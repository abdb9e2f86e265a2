"""/metrics exports each queue stage's figures, read from the store on scrape.

What an autoscaler of workers reads: per stage, messages queued, in flight
and dead-lettered, and the oldest live message's age. On a shared Redis an
API process without workers exports what other processes' workers hold.
"""

from __future__ import annotations

import re
from pathlib import Path

from fastapi import FastAPI
from svckit import ScriptedInvestigator, in_process, make_service

from agentrt._clock import FakeClock
from agentrt.queues import Message
from agentrt.queues._redis_streams import RedisQueue
from fixbugs.queued import QUEUE_STAGES
from fixbugs.service import ApiKeys, JobService, ServiceTelemetry, Workspace, create_app


def gauges(text: str, name: str) -> dict[str, float]:
    """``name{stage="S"} V`` lines of an exposition, by stage."""
    pattern = re.compile(rf'^{name}{{stage="([^"]+)"}} (\S+)$', re.M)
    return {stage: float(v) for stage, v in pattern.findall(text)}


def app_of(service: JobService, telemetry: ServiceTelemetry) -> FastAPI:
    return create_app(
        service,
        keys=ApiKeys(()),
        max_request_bytes=1 << 20,
        metrics=telemetry.exposition_for(service),
        run_workers=False,
    )


async def test_metrics_show_queued_leased_dead_and_the_oldest_age(tmp_path: Path) -> None:
    service, telemetry = make_service(tmp_path / "ws", ScriptedInvestigator(), mode="staged")
    clock = service.clock
    assert isinstance(clock, FakeClock)
    async with in_process(app_of(service, telemetry), service, workers=False) as client:
        for _ in range(2):
            assert (await client.post("/v1/bugs", json={"example": "invoice"})).status_code == 202
            clock.advance(30)
        # a worker leases one of them; another stage's message dies (max_deliveries=2)
        assert await service.backend.claim("analysis", "w", lease_s=600) is not None
        await service.backend.put(Message("x", "reproduction", "x"))
        for _ in range(2):
            d = await service.backend.claim("reproduction", "w", lease_s=600)
            assert d is not None
            await service.backend.fail(d, "boom")
        clock.advance(12)
        text = (await client.get("/metrics")).text

    assert gauges(text, "agentrt_queue_queued") == {
        "analysis": 1,
        "reproduction": 0,
        "root_cause": 0,
        "repair": 0,
    }
    assert gauges(text, "agentrt_queue_in_flight") == dict.fromkeys(QUEUE_STAGES, 0) | {
        "analysis": 1
    }
    assert gauges(text, "agentrt_queue_dead_letters") == dict.fromkeys(QUEUE_STAGES, 0) | {
        "reproduction": 1
    }
    # the first bug came in 72 s ago; an empty stage's age is 0
    assert gauges(text, "agentrt_queue_oldest_age_seconds") == dict.fromkeys(QUEUE_STAGES, 0) | {
        "analysis": 72
    }
    assert gauges(text, "agentrt_queue_depth")["analysis"] == 2  # the existing name stays


async def test_an_api_without_workers_exports_what_other_processes_hold_on_redis(
    tmp_path: Path, redis_url: str
) -> None:
    clock = FakeClock(start=5000.0)  # both "machines" read the same time
    telemetry = ServiceTelemetry()
    investigator = ScriptedInvestigator()
    service = JobService(
        RedisQueue(redis_url, clock=clock, max_deliveries=2, namespace="fixbugs"),
        investigator,
        Workspace(tmp_path / "ws", None),
        clock=clock,
        capacity=4,
        workers=0,
        observer=telemetry,
        flow=telemetry.flow,
        staged=lambda publish: investigator.staged(publish, capacity=4),
    )
    worker = RedisQueue(redis_url, clock=clock, max_deliveries=2, namespace="fixbugs")
    try:
        async with in_process(app_of(service, telemetry), service, workers=False) as client:
            assert (await client.post("/v1/bugs", json={"example": "invoice"})).status_code == 202
            clock.advance(20)
            # another process's worker: a bug it moved on to repair, which it now runs
            await worker.put(Message("other", "repair", "other"))
            assert await worker.claim("repair", "w2", lease_s=600) is not None
            clock.advance(7)
            text = (await client.get("/metrics")).text
    finally:
        await worker.aclose()
        await service.backend.aclose()

    assert gauges(text, "agentrt_queue_queued")["analysis"] == 1
    assert gauges(text, "agentrt_queue_in_flight") == dict.fromkeys(QUEUE_STAGES, 0) | {"repair": 1}
    assert gauges(text, "agentrt_queue_oldest_age_seconds")["analysis"] == 27
    assert gauges(text, "agentrt_queue_oldest_age_seconds")["repair"] == 7
