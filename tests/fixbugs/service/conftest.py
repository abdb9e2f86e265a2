"""Fixtures: a service on an in-memory queue with a scripted investigator, in-process."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from svckit import Harness, ScriptedInvestigator, make_service

from agentrt.sim import StreamingASGITransport
from fixbugs.service import ApiKeys, create_app


@pytest.fixture
def investigator() -> ScriptedInvestigator:
    return ScriptedInvestigator()


@pytest.fixture
async def harness(
    tmp_path: Path, investigator: ScriptedInvestigator, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    opts = getattr(request, "param", {})
    service, telemetry = make_service(
        tmp_path / "ws", investigator, capacity=opts.get("capacity", 4), limits=opts.get("limits")
    )
    app = create_app(
        service,
        keys=ApiKeys(opts.get("keys", ())),
        max_request_bytes=opts.get("max_request_bytes", 1 << 20),
        metrics=telemetry.exposition_for(service),
        run_workers=False,
    )
    transport = StreamingASGITransport(app, raise_app_exceptions=False)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://test") as client,
        asyncio.TaskGroup() as tg,
    ):
        workers = tg.create_task(service.run()) if opts.get("workers", True) else None
        yield Harness(service, client, investigator, telemetry)
        if workers is not None:
            workers.cancel()
