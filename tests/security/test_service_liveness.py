"""While a hostile job is blocked on a FIFO, the service still answers ``/healthz``.

Issue 14: a ``cov.json`` FIFO blocked the service's event loop, and
``/healthz`` timed out for every client for over ten minutes. Here the real
server (uvicorn, its own loop in a thread) runs a job whose repository
plants the FIFO where SBFL's coverage report is written, through the real
SBFL code and a real sandbox. The client waits on the job's own signal
(its coverage command has started and is blocked), then asks ``/healthz``
with a 1 s client timeout: a liveness bound, not a speed measurement.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from hostile import NEEDS_NAMESPACES, PY, open_sandbox
from svckit import memory_service, tar_gz, whole_report

from agentrt import SystemClock
from fixbugs.localize.sbfl import run_sbfl
from fixbugs.run.progress import EventSink
from fixbugs.run.report_schema import ReportModel
from fixbugs.sandbox import CommandResult
from fixbugs.service import ApiKeys, BugSpec, create_app

pytestmark = NEEDS_NAMESPACES

KEY = "liveness-key"
JSON_BLOCK_S = 8.0  # how long the sandboxed contexts report stays blocked on the FIFO
FILES = {
    "repo/pkg/__init__.py": b"",
    "repo/pkg/calc.py": b"def add(a, b):\n    return a - b\n",
    "repo/test_attack.py": (
        b"from pkg.calc import add\n\n\ndef test_ok():\n    assert add(0, 0) == 0\n\n\n"
        b"def test_bad():\n    assert add(2, 2) == 4\n"
    ),
    "repo/conftest.py": (
        b"import glob, os\n\n\ndef pytest_unconfigure(config):\n"
        b"    for d in glob.glob('.fixbugs-sbfl-*'):\n"
        b"        os.mkfifo(os.path.join(d, 'cov.json'))\n"
    ),
}


def fifo_investigator(sandboxes_at: Path, blocked: threading.Event):
    """What the agent's SBFL step does, in a sandbox of the uploaded repository."""

    async def investigate(spec: BugSpec, sink: EventSink) -> ReportModel:
        sb = await asyncio.to_thread(open_sandbox, spec.repo, sandboxes_at)
        try:

            class Signalling:
                root = sb.root

                async def run(
                    self, cmd: Sequence[str], *, timeout_s: float, env: Any = None
                ) -> CommandResult:
                    if "fixbugs_sbfl_report" in cmd:  # the contexts report (run_sbfl)
                        blocked.set()
                        timeout_s = min(timeout_s, JSON_BLOCK_S)
                    return await sb.run(list(cmd), timeout_s=timeout_s, env=env)

            result = await run_sbfl(Signalling(), Path(PY), ["test_attack.py"])
        finally:
            await asyncio.to_thread(sb.close)
        return whole_report(spec.title, notes=list(result.notes))

    return investigate


def test_healthz_answers_while_a_job_is_blocked_on_a_fifo(tmp_path: Path) -> None:
    blocked = threading.Event()
    (tmp_path / "sandboxes").mkdir()
    clock = SystemClock()
    investigator = fifo_investigator(tmp_path / "sandboxes", blocked)
    service = memory_service(tmp_path / "ws", investigator, clock=clock, capacity=4)
    app = create_app(service, keys=ApiKeys({KEY: "acme"}))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    headers = {"X-API-Key": KEY}
    try:
        with httpx.Client(base_url=base, timeout=60) as client:
            r = client.post(
                "/v1/bugs/upload",
                headers=headers,
                files={
                    "report": ("r.md", b"# add is wrong\n"),
                    "repo": ("r.tar.gz", tar_gz(FILES)),
                },
            )
            assert r.status_code == 202, r.text
            job = r.json()["id"]
            assert blocked.wait(timeout=300), "the job never reached its coverage report"
            # the job's sandbox is now blocked on the FIFO for JSON_BLOCK_S seconds
            health = client.get("/healthz", timeout=1.0)
            assert health.status_code == 200 and health.json() == {"status": "ok"}
            status = client.get(f"/v1/bugs/{job}", headers=headers, timeout=1.0)
            assert status.json()["state"] == "running"  # it was still blocked meanwhile
            with client.stream("GET", f"/v1/bugs/{job}/events", headers=headers) as events:
                ends = [ln for ln in events.iter_lines() if ln.startswith("event: end")]
            assert ends
            report = client.get(f"/v1/bugs/{job}/report", headers=headers).json()
            assert any("not a regular file" in n for n in report["notes"]), report
            assert client.get("/healthz", timeout=1.0).status_code == 200
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()
    assert not thread.is_alive()
