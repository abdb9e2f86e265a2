"""Fixtures: a service on an in-memory queue with a scripted agent, in-process.

Every test of the harness runs in both of ``fixbugs serve``'s modes: the
stage queues (its default) and whole-bug jobs (``--whole-bug``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from svckit import MODES, Harness, Mode, ScriptedInvestigator, in_process, make_service

from fixbugs.service import ApiKeys, create_app


@pytest.fixture
def investigator() -> ScriptedInvestigator:
    return ScriptedInvestigator()


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> Mode:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def harness(
    tmp_path: Path, investigator: ScriptedInvestigator, mode: Mode, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    opts = getattr(request, "param", {})
    service, telemetry = make_service(
        tmp_path / "ws",
        investigator,
        mode=mode,
        capacity=opts.get("capacity", 4),
        limits=opts.get("limits"),
    )
    app = create_app(
        service,
        keys=ApiKeys(opts.get("keys", ())),
        max_request_bytes=opts.get("max_request_bytes", 1 << 20),
        metrics=telemetry.exposition_for(service),
        run_workers=False,
    )
    async with in_process(app, service, workers=opts.get("workers", True)) as client:
        yield Harness(service, client, investigator, telemetry, mode)
