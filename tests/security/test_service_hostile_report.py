"""A tenant's hostile report does not hold up another tenant's requests (issue 41).

Seen: a 60 KB report of unclosed code fences blocked every other tenant's
requests for 48 s, a 40 KB line of ``EEE…Error`` for 27.6 s: the report's
parsers ran on the service's event loop and were quadratic. Here the real
server (uvicorn, its own loop in a thread) runs tenant A's two jobs with the
real investigator (no model: the static analysis, the snippet extraction and
the reproduction all read the report), while tenant B lists its bugs over
and over. Each of B's requests is timed by this test's own clock: the issue's
criterion is that B is answered within 1 s while A's jobs are processed.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from hostile import NEEDS_NAMESPACES
from svckit import memory_service, tar_gz

from agentrt import SystemClock
from fixbugs.service import ApiKeys, create_app
from fixbugs.service.investigate import agent_investigator

pytestmark = NEEDS_NAMESPACES

A, B = "tenant-a-key", "tenant-b-key"
REPO = {
    "repo/pkg/__init__.py": b"",
    "repo/pkg/calc.py": b"def add(a, b):\n    return a - b\n",
    "repo/test_calc.py": (
        b"from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    ),
}
REPORTS = {
    "fences.md": b"# add is wrong\n" + b"```py\n" * 10_000,  # 60 KB, no fence ever closed
    "error.md": b"# add is wrong\n" + b"E" * 40_000 + b"Error\n",  # one 40 KB line
}
B_BOUND_S = 1.0
ENDED = {"done", "failed", "dead"}


def test_another_tenant_is_answered_while_hostile_reports_are_read(tmp_path: Path) -> None:
    service = memory_service(
        tmp_path / "ws", agent_investigator(None), clock=SystemClock(), capacity=4, workers=2
    )
    app = create_app(service, keys=ApiKeys({A: "acme", B: "globex"}))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    slowest, while_running = 0.0, 0
    try:
        with httpx.Client(base_url=base, timeout=120) as client:
            jobs = []
            for name, report in REPORTS.items():
                r = client.post(
                    "/v1/bugs/upload",
                    headers={"X-API-Key": A},
                    files={"report": (name, report), "repo": ("r.tar.gz", tar_gz(REPO))},
                )
                assert r.status_code == 202, r.text
                jobs.append(r.json()["id"])
            deadline = time.monotonic() + 400
            while time.monotonic() < deadline:
                states = {
                    client.get(f"/v1/bugs/{j}", headers={"X-API-Key": A}).json()["state"]
                    for j in jobs
                }
                if states <= ENDED:
                    break
                start = time.perf_counter()
                listed = client.get("/v1/bugs", headers={"X-API-Key": B})
                took = time.perf_counter() - start
                assert listed.status_code == 200
                if "running" in states:
                    while_running += 1
                    slowest = max(slowest, took)
                time.sleep(0.05)
            else:
                raise AssertionError(f"A's jobs did not end: {states}")
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()
    assert while_running >= 3, "B asked too rarely while A's jobs ran to say anything"
    assert slowest < B_BOUND_S, f"B waited {slowest:.1f} s for GET /v1/bugs while A's jobs ran"
