"""The API in this process, two worker processes, on Redis.

The workers are `fixbugs serve --no-api` (its default, the stage queues, or
`--whole-bug`) or `fixbugs worker`. The API runs no workers, so every bug is handled by another
process; its SSE stream must still show the bug's progress live (the first
event comes while the bug is running), tagged with the worker that produced
it; and once the stream has ended, the bug's inputs are gone.
"""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from svckit import STAGE_ORDER
from userpython import user_python

from agentrt.sim import StreamingASGITransport
from fixbugs.service.serve import ServeConfig, build_app

pytestmark = pytest.mark.needs_root

FIXBUGS = str(Path(sys.executable).parent / "fixbugs")


def _worker(url: str, ws: Path, mode: str) -> subprocess.Popen[bytes]:
    if mode == "worker":  # knows no workspace: it reads the inputs where the spec says
        args = [FIXBUGS, "worker", "--queue", url, "--no-model", "--python", str(user_python())]
    else:
        args = [FIXBUGS, "serve", "--queue", url, "--no-api", "--workspace", str(ws)]
        args += ["--no-model", "--workers", "1"] + (["--whole-bug"] if mode == "whole-bug" else [])
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


async def _run(
    url: str, ws: Path, staged: bool
) -> tuple[list[tuple[str, dict[str, Any]]], list[str], bool]:
    app, service, _telemetry = build_app(
        ServeConfig(workspace=ws, queue=url, workers=0, whole_bug=not staged),
        models=None,
        run_workers=False,
    )
    transport = StreamingASGITransport(app, raise_app_exceptions=False)
    events: list[tuple[str, dict[str, Any]]] = []
    states_at_first: list[str] = []
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://test", timeout=300) as client,
        asyncio.TaskGroup() as tg,
    ):
        relay = tg.create_task(service.run())
        r = await client.post("/v1/bugs", json={"example": "invoice"})
        assert r.status_code == 202, r.text
        job = r.json()["id"]
        async with client.stream("GET", f"/v1/bugs/{job}/events") as resp:
            kind = "message"
            async for line in resp.aiter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    events.append((kind, json.loads(line[6:])))
                    if len(events) == 1:
                        st = (await client.get(f"/v1/bugs/{job}")).json()
                        states_at_first.append(st["state"])
                    if kind == "end":
                        break
        inputs_left = service.workspace.job_dir(job).exists()
        rep = (await client.get(f"/v1/bugs/{job}/report")).json()
        events.append(("report", rep))
        relay.cancel()
    await service.backend.aclose()
    return events, states_at_first, inputs_left


@pytest.mark.parametrize("mode", ["whole-bug", "staged", "worker"])
def test_sse_shows_live_events_of_a_bug_run_by_another_process(
    tmp_path: Path, redis_url: str, mode: str
) -> None:
    ws = tmp_path / "ws"
    staged = mode != "whole-bug"
    workers = [_worker(redis_url, ws, mode) for _ in range(2)]
    try:
        events, states_at_first, inputs_left = asyncio.run(_run(redis_url, ws, staged))
    finally:
        for p in workers:
            p.send_signal(signal.SIGTERM)
        for p in workers:
            p.wait(60)
    host = socket.gethostname()
    names = {f"{host}:{p.pid}" for p in workers}
    kinds = [k for k, _ in events]
    assert states_at_first == ["running"], "the first event came only after the run"
    assert kinds[0] == "run_started"
    started = [e["stage"] for k, e in events if k == "stage_started"]
    assert started == list(STAGE_ORDER) or sorted(started) == sorted(STAGE_ORDER)
    tagged = {e.get("worker") for k, e in events if k not in ("end", "status", "report")}
    assert tagged and tagged <= names  # worker processes ran it, not the API
    if not staged:
        assert len(tagged) == 1
    assert kinds[-2:] == ["end", "report"] and events[-2][1] == {"state": "done"}
    assert events[-1][1]["validated"] is True
    assert not inputs_left, "the bug's inputs outlived its end"
