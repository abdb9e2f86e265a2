"""`fixbugs serve` (its default, the stage queues): the API on the staged pipeline, embedded."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentrt.llm import FakeModel
from agentrt.sim import StreamingASGITransport
from fixbugs.queued import QUEUE_STAGES
from fixbugs.run.context import Models
from fixbugs.service.serve import ServeConfig, build_app

pytestmark = pytest.mark.needs_root

STAGES = ["analysis", "file_relevance", "reproduction", "root_cause", "fix", "validation"]


async def _sse(client: httpx.AsyncClient, path: str) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    async with client.stream("GET", path) as resp:
        kind = "message"
        async for line in resp.aiter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                out.append((kind, json.loads(line[6:])))
                if kind == "end":
                    break
    return out


async def test_two_bugs_through_the_staged_service(tmp_path: Path) -> None:
    model = FakeModel()
    cfg = ServeConfig(workspace=tmp_path / "ws", workers=2, capacity=8)  # the default mode
    app, service, _ = build_app(cfg, models=Models(map=model, judge=model), run_workers=False)
    transport = StreamingASGITransport(app, raise_app_exceptions=False)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://test", timeout=300) as client,
        asyncio.TaskGroup() as tg,
    ):
        workers = tg.create_task(service.run())
        jobs = []
        for _ in range(2):
            r = await client.post("/v1/bugs", json={"example": "invoice"})
            assert r.status_code == 202, r.text
            jobs.append(r.json()["id"])
        for job in jobs:
            events = await _sse(client, f"/v1/bugs/{job}/events")
            started = [e["stage"] for k, e in events if k == "stage_started"]
            assert started == STAGES, "\n".join(
                f"{k} {e.get('stage')} {str(e.get('message'))[:300]}" for k, e in events
            )
            assert events[-1] == ("end", {"state": "done"})
            st = (await client.get(f"/v1/bugs/{job}")).json()
            assert st["state"] == "done" and set(st["stages"].values()) == {"done"}
            rep = (await client.get(f"/v1/bugs/{job}/report")).json()
            assert rep["validated"] is True and rep["patch"].startswith("--- a/shop/pricing.py")
            recs = {r.stage for r in await service.backend.records(job)}
            assert recs == set(QUEUE_STAGES)
        listed = (await client.get("/v1/bugs")).json()
        assert sorted(b["id"] for b in listed) == sorted(jobs)
        assert all(b["state"] == "done" for b in listed)
        snap = (await client.get("/v1/pipeline")).json()
        assert snap["queue"]["depth"] == 0 and snap["jobs"]["done"] == 2
        workers.cancel()
    await service.backend.aclose()
