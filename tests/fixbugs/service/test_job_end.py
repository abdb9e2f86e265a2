"""A job whose workers all died holding it ends: its stream closes, its inputs go.

The queue dead-letters a stage when it is claimed after its last delivery's
worker died (no stage function runs, nothing raises). The service hears of that
from the queue's failure hooks, the one place that knows which failure was the
last, as it hears of a stage that raised on its last delivery.
"""

from __future__ import annotations

from pathlib import Path

from svckit import ScriptedInvestigator, memory_service

from agentrt import FakeClock
from fixbugs.queued.spec import BugSpec


async def test_a_job_dead_lettered_at_claim_ends_its_stream_and_loses_its_files(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    service = memory_service(
        tmp_path / "ws", ScriptedInvestigator(), clock=clock, workers=0, max_deliveries=2
    )
    spec = BugSpec(title="t", report=Path("report.md"), repo=Path("repo"))
    service.workspace.create("job1")
    await service.enqueue("job1", spec)
    assert service.workspace.job_dir("job1").exists()
    (stage,) = service.stage_names
    for _ in range(2):  # each worker that takes it dies: its lease runs out
        assert await service.backend.claim(stage, "doomed", lease_s=5.0) is not None
        clock.advance(6.0)
    log = service.hub.log("job1")
    assert log is not None and not log.finished and log.events == []

    assert await service.backend.claim(stage, "survivor", lease_s=5.0) is None
    ((_, failed),) = log.events
    assert failed["kind"] == "failed" and failed["data"] == {"final": True}
    assert "delivered too many times" in failed["message"]
    assert log.finished
    assert not service.workspace.job_dir("job1").exists()
    meta = service.index.get("job1")
    assert meta is not None and meta.ended_at == clock.now()
    status = await service.status("job1")
    assert status is not None and status.state == "dead"
