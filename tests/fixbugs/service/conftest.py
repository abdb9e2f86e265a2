"""Fixtures: a service on an in-memory queue with a scripted investigator, in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from svckit import Harness, ScriptedInvestigator, in_process, make_service

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
    async with in_process(app, service, workers=opts.get("workers", True)) as client:
        yield Harness(service, client, investigator, telemetry)
