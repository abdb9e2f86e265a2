"""A connection that never completes its request headers is closed (issue 21, item 6).

The attack, built here: a client opens a connection and sends part of a
request line or headers without their blank line, then nothing (slowloris).
The ASGI app never sees such a request, so ``BodyLimit`` cannot time it, and
uvicorn keeps the socket open forever. With the server's header timeout
(``fixbugs serve --header-timeout-s``) every such connection is closed,
whether fresh or after a response on a kept-alive one, while requests and
event streams that outlast the timeout are served as before.

A real uvicorn server runs on a free loopback port, with a tiny header
timeout (0.3 s) and a generous bound on every read (10 s): the tests assert
that the server closed the connection, never how long it took.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from test_service_hostile_clients import (
    READ_BOUND_S,
    Served,
    read_until_closed,
    service_at,
    serving,
)

from agentrt import SystemClock
from fixbugs.service import create_app
from fixbugs.service.header_timeout import header_timeout_h11

HEADER_TIMEOUT_S = 0.3

STALLS = {
    "nothing": b"",
    "half a request line": b"POST /v1/bugs/up",
    "headers without their end": b"POST /v1/bugs/upload HTTP/1.1\r\nHost: 127.0.0.1\r\n",
}


@pytest.fixture
def slow_headers_cut(tmp_path: Path) -> Iterator[Served]:
    service = service_at(tmp_path / "ws", SystemClock())
    app = create_app(service, run_workers=False, heartbeat_s=0.02)
    with serving(app, service, http=header_timeout_h11(HEADER_TIMEOUT_S)) as served:
        yield served


def stalled_headers(port: int, sent: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=READ_BOUND_S)
    s.sendall(sent)
    return s


@pytest.mark.parametrize("sent", STALLS.values(), ids=STALLS.keys())
def test_a_connection_whose_headers_stall_is_closed(slow_headers_cut: Served, sent: bytes) -> None:
    s = stalled_headers(slow_headers_cut.port, sent)
    try:
        answer = read_until_closed(s)  # before the fix: socket.timeout, it stayed open
    finally:
        s.close()
    assert answer == b""  # closed, as an idle keep-alive connection is: no request, no answer
    assert list((slow_headers_cut.service.workspace.root / "jobs").iterdir()) == []


def test_50_stalled_headers_are_all_closed_and_healthz_answers(slow_headers_cut: Served) -> None:
    stalled = [
        stalled_headers(slow_headers_cut.port, STALLS["headers without their end"])
        for _ in range(50)
    ]
    try:
        health = httpx.get(f"{slow_headers_cut.base}/healthz", timeout=READ_BOUND_S)
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        answers = [read_until_closed(s) for s in stalled]
    finally:
        for s in stalled:
            s.close()
    assert answers == [b""] * 50


def test_a_kept_alive_connection_whose_next_headers_stall_is_closed(
    slow_headers_cut: Served,
) -> None:
    s = stalled_headers(slow_headers_cut.port, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    try:
        got = b""
        while b'"ok"' not in got:  # the first request is answered; the connection stays open
            chunk = s.recv(65536)
            assert chunk, got
            got += chunk
        assert got.startswith(b"HTTP/1.1 200") and b"connection: close" not in got.lower()
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 12")  # the next request's headers stall
        assert read_until_closed(s) == b""  # before the fix: socket.timeout
    finally:
        s.close()


def test_requests_and_an_event_stream_outlive_the_header_timeout(
    slow_headers_cut: Served,
) -> None:
    with httpx.Client(base_url=slow_headers_cut.base, timeout=READ_BOUND_S) as c:
        job = c.post("/v1/bugs", json={"example": "invoice"})
        assert job.status_code == 202, job.text
        with c.stream("GET", f"/v1/bugs/{job.json()['id']}/events") as events:
            beats: list[str] = []
            for line in events.iter_lines():
                beats += [line] if line else []
                if len(beats) == 50:  # 0.02 s apart: well past the 0.3 s header timeout
                    break
        assert beats == [": keep-alive"] * 50
        status = c.get(f"/v1/bugs/{job.json()['id']}")
        assert status.status_code == 200 and status.json()["state"] == "queued"


FIXBUGS = [sys.executable, "-c", "from fixbugs.cli import main; main()"]


def test_a_header_timeout_that_is_not_positive_is_one_line() -> None:
    done = subprocess.run(
        [*FIXBUGS, "serve", "--no-model", "--header-timeout-s", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == "error: --header-timeout-s must be positive", done.stderr
    with pytest.raises(ValueError, match="positive"):
        header_timeout_h11(0.0)


def test_a_body_still_trickling_after_its_early_answer_is_closed(slow_headers_cut: Served) -> None:
    # a foreign Origin is refused (403) before the body is read; the connection stays
    # open for the body's rest, which its client sends a few bytes of, then stalls
    s = stalled_headers(
        slow_headers_cut.port,
        b"POST /v1/bugs HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\n"
        b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{",
    )
    try:
        got = b""
        while b"\r\n\r\n" not in got or not got.endswith(b"}"):
            chunk = s.recv(65536)
            assert chunk, got
            got += chunk
        assert got.startswith(b"HTTP/1.1 403") and b"connection: close" not in got.lower()
        s.sendall(b'"example": ')  # more of the body: uvicorn's keep-alive timer stops
        assert read_until_closed(s) == b""  # before the fix: socket.timeout
    finally:
        s.close()
