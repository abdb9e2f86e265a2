"""Two `fixbugs worker` processes on Redis, each serving some stages of one bug.

A reader in this process follows the bug's event log in the queue's store:
it sees the first worker's analysis events while the bug is still in
flight (before the repair stage's effect exists), then the other worker's
reproduction and repair events, up to ``run_finished`` and the end marker.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from stagedkit import example_spec, staged_agent
from userpython import user_python

from agentrt.pipeline import PipelineRunner
from agentrt.queues import open_queue
from fixbugs.queued.event_log import FINISHED, open_events

pytestmark = pytest.mark.needs_root

FIXBUGS = str(Path(sys.executable).parent / "fixbugs")


def _worker(url: str, *stages: str) -> subprocess.Popen[bytes]:
    args = [FIXBUGS, "worker", "--queue", url, "--no-model", "--python", str(user_python())]
    for s in stages:
        args += ["--stage", s]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


async def _follow(url: str, spec: dict[str, Any]) -> tuple[list[dict[str, Any]], bool]:
    q = open_queue(url, namespace="fixbugs")
    channel = open_events(url, namespace="fixbugs")
    try:
        runner = PipelineRunner(staged_agent(q.clock, lambda _j, _e: None).pipeline(), q)
        await runner.submit("bug", "bug", spec)
        seen: list[dict[str, Any]] = []
        live = False
        after = "0"
        for _ in range(600):  # each read waits for events; bounded, not timed
            got = await channel.read("bug", after, timeout_s=1.0)
            if got and not seen:
                live = not await q.results("bug", ["repair"])
            for pos, ev in got:
                after = pos
                seen.append(ev)
            if any(ev["kind"] == FINISHED for ev in seen):
                break
        return seen, live
    finally:
        await q.aclose()
        await channel.aclose()


def test_live_events_from_two_worker_processes_on_redis(tmp_path: Path, redis_url: str) -> None:
    spec = example_spec(tmp_path / "ex")
    a = _worker(redis_url, "analysis", "root_cause")
    b = _worker(redis_url, "reproduction", "repair")
    try:
        events, live = asyncio.run(_follow(redis_url, spec))
    finally:
        for p in (a, b):
            p.send_signal(signal.SIGTERM)
        for p in (a, b):
            p.wait(60)
    host = socket.gethostname()
    by_stage: dict[str, set[str]] = {}
    for ev in events:  # who ran each stage (notes may name a stage from elsewhere)
        if ev["kind"] in ("stage_started", "stage_finished"):
            by_stage.setdefault(ev["stage"], set()).add(ev["worker"])
    # the worker that ended the bug marks the end after its last event
    assert events[-1]["kind"] == FINISHED
    assert events[-2]["kind"] == "run_finished" and events[-2]["data"]["validated"] is True
    assert live, "the first events arrived only after the bug had finished"
    assert by_stage["analysis"] == {f"{host}:{a.pid}"}
    assert by_stage["root_cause"] == {f"{host}:{a.pid}"}
    assert by_stage["reproduction"] == {f"{host}:{b.pid}"}
    assert by_stage["validation"] == {f"{host}:{b.pid}"}
