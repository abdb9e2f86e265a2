"""The service holds up against hostile HTTP clients (issue 21, item 6).

Each attack that worked is sent again, built here: 200 stalled uploads that
the server never closed; ``Last-Event-ID: ²`` and a 5,000-digit value that
answered 500 with a traceback; a large body with an unknown field whose 422
echoed all of it; error bodies naming the workspace's absolute path; and a
web page's request (a foreign ``Origin``, a rebound ``Host``) that a
key-less loopback server accepted and ran.

Where a socket matters (a stalled body, the server's log) a real uvicorn
server runs on a free loopback port in a thread. Timeouts there are tiny
(0.2 s) and every read has a generous bound (10 s): the tests assert that
the server closed the connection, never how long it took. In-process tests
run the app on a :class:`FakeClock`, advanced by hand.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from svckit import InProcess, in_process, memory_service, tar_gz, whole_report

from agentrt import Clock, FakeClock, SystemClock
from agentrt.sim import StreamingASGITransport
from fixbugs.run.progress import EventSink, ProgressEvent
from fixbugs.run.report_schema import ReportModel
from fixbugs.service import ApiKeys, BugSpec, Investigator, JobService, create_app

KEY = "hostile-clients-key"
READ_BOUND_S = 10.0  # how long a client waits on the server; a liveness bound, not a timing


async def quiet_investigator(spec: BugSpec, sink: EventSink) -> ReportModel:
    sink(ProgressEvent("run_started", "run", 0.0, "investigating"))
    return whole_report(spec.title)


async def failing_investigator(spec: BugSpec, sink: EventSink) -> ReportModel:
    """Fails as a real run does: an OSError whose text names a server path."""
    sink(ProgressEvent("run_started", "run", 0.0, "investigating"))
    await asyncio.to_thread((spec.repo / "missing" / "conftest.py").read_text)
    raise AssertionError("unreachable: the file does not exist")


def service_at(
    root: Path, clock: Clock, investigator: Investigator = quiet_investigator
) -> JobService:
    return memory_service(root, investigator, clock=clock)


def upload(report: bytes = b"# add is wrong\n\nit subtracts\n") -> dict[str, Any]:
    repo = tar_gz({"repo/pkg/__init__.py": b"", "repo/pkg/calc.py": b"def add(a, b):\n"})
    return {"report": ("r.md", report), "repo": ("r.tar.gz", repo)}


# -- a real server --------------------------------------------------------------------


@dataclass
class Served:
    port: int
    service: JobService

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@contextmanager
def serving(
    app: FastAPI, service: JobService, *, http: type[asyncio.Protocol] | str = "auto"
) -> Iterator[Served]:
    """``app`` under uvicorn (``http``: its protocol) on a free loopback port.

    Logs reach pytest's caplog.
    """
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    config = uvicorn.Config(app, log_config=None, log_level="warning", lifespan="on", http=http)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        port = sock.getsockname()[1]
        with httpx.Client(timeout=READ_BOUND_S) as probe:
            for _ in range(200):  # the server answers once its loop has started
                try:
                    probe.get(f"http://127.0.0.1:{port}/healthz")
                    break
                except httpx.TransportError:
                    threading.Event().wait(0.05)
        yield Served(port, service)
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()
    assert not thread.is_alive()


def stalled_upload(port: int) -> socket.socket:
    """A multipart upload that announces 1 MB, sends its first bytes, then nothing."""
    s = socket.create_connection(("127.0.0.1", port), timeout=READ_BOUND_S)
    s.sendall(
        b"POST /v1/bugs/upload HTTP/1.1\r\n"
        + f"Host: 127.0.0.1:{port}\r\n".encode()
        + b"Content-Type: multipart/form-data; boundary=xyz\r\n"
        b"Content-Length: 1000000\r\n\r\n"
        b'--xyz\r\nContent-Disposition: form-data; name="report"; filename="r.md"\r\n\r\n# a'
    )
    return s


def read_until_closed(s: socket.socket) -> bytes:
    """Everything the server sends until it closes; ``socket.timeout`` if it never does."""
    got = b""
    while chunk := s.recv(65536):
        got += chunk
    return got


@pytest.fixture
def stall_cut(tmp_path: Path) -> Iterator[Served]:
    service = service_at(tmp_path / "ws", SystemClock())
    app = create_app(service, run_workers=False, body_timeout_s=0.2, heartbeat_s=0.02)
    with serving(app, service) as served:
        yield served


def test_a_stalled_upload_is_answered_408_and_its_connection_closed(stall_cut: Served) -> None:
    s = stalled_upload(stall_cut.port)
    try:
        answer = read_until_closed(s)  # before the fix: socket.timeout, it stayed open
    finally:
        s.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"stalled" in body
    assert list((stall_cut.service.workspace.root / "jobs").iterdir()) == []


def test_200_stalled_uploads_are_all_closed_and_healthz_still_answers(stall_cut: Served) -> None:
    stalled = [stalled_upload(stall_cut.port) for _ in range(200)]
    try:
        health = httpx.get(f"{stall_cut.base}/healthz", timeout=READ_BOUND_S)
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        answers = [read_until_closed(s) for s in stalled]
    finally:
        for s in stalled:
            s.close()
    assert all(a.startswith(b"HTTP/1.1 408") for a in answers)


def test_an_event_stream_outlives_the_body_timeout(stall_cut: Served) -> None:
    with httpx.Client(base_url=stall_cut.base, timeout=READ_BOUND_S) as c:
        job = c.post("/v1/bugs", json={"example": "invoice"}).json()["id"]
        with c.stream("GET", f"/v1/bugs/{job}/events") as events:
            beats: list[str] = []
            for line in events.iter_lines():
                beats += [line] if line else []
                if len(beats) == 50:  # 0.02 s apart: well past the 0.2 s body timeout
                    break
    assert beats == [": keep-alive"] * 50


# -- a stalled body on the injected clock ----------------------------------------------


PART_HEAD = [
    b"--xyz\r\n",
    b'Content-Disposition: form-data; name="report"; filename="r.md"\r\n\r\n',
]


async def _drive(app: FastAPI, clock: FakeClock, chunks: list[bytes], gap_s: float) -> Any:
    """Send ``chunks``, each ``gap_s`` after the last, then stall; what the app sent."""
    sent: list[Any] = []
    arrived = asyncio.Event()
    queue = list(chunks)

    async def receive() -> dict[str, Any]:
        if not queue:
            await asyncio.Event().wait()  # the client sends nothing more, ever
        await arrived.wait()
        arrived.clear()
        return {"type": "http.request", "body": queue.pop(0), "more_body": True}

    async def send(msg: Any) -> None:
        sent.append(msg)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/bugs/upload",
        "raw_path": b"/v1/bugs/upload",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"localhost"),
            (b"content-type", b"multipart/form-data; boundary=xyz"),
            (b"content-length", b"1000000"),
        ],
        "server": ("localhost", 80),
        "client": ("127.0.0.1", 5000),
    }
    task = asyncio.create_task(app(scope, receive, send))
    deadline: float | None = None
    while (deadline := await _next_timer(clock, task, deadline)) is not None:
        if queue:  # the next chunk comes gap_s later, or the body timer fires first
            clock.advance(gap_s)
            arrived.set()
        else:  # the client has stalled: let the body timer fire
            clock.advance(deadline - clock.now())
    await asyncio.wait_for(task, READ_BOUND_S)
    return sent


async def _next_timer(
    clock: FakeClock, task: asyncio.Task[None], last: float | None
) -> float | None:
    """Yield until the app waits on a new body timer (its deadline) or has finished (None)."""
    for _ in range(10_000):
        if task.done():
            return None
        deadline = clock.next_deadline()
        if deadline is not None and deadline != last:
            return deadline
        await asyncio.sleep(0)
    raise AssertionError("the app neither finished nor waited on the clock")


def _status(sent: list[Any]) -> tuple[int, dict[str, Any]]:
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert (b"connection", b"close") in start["headers"]
    return start["status"], json.loads(body)


async def test_a_body_idle_past_the_timeout_is_cut_on_the_clock(tmp_path: Path) -> None:
    clock = FakeClock()
    app = create_app(service_at(tmp_path / "ws", clock), run_workers=False, body_timeout_s=30)
    sent = await _drive(app, clock, PART_HEAD, gap_s=29.0)
    status, body = _status(sent)
    assert status == 408 and "no data for 30 s" in body["detail"]
    assert clock.now() == 2 * 29.0 + 30.0  # cut when the stall reached the timeout


async def test_a_trickling_body_is_cut_at_the_deadline(tmp_path: Path) -> None:
    clock = FakeClock()
    service = service_at(tmp_path / "ws", clock)
    app = create_app(service, run_workers=False, body_timeout_s=30, body_deadline_s=100)
    # a byte every 29 s never trips the idle timeout; the 100 s deadline cuts it
    sent = await _drive(app, clock, [*PART_HEAD, *[b"a"] * 8], gap_s=29.0)
    status, body = _status(sent)
    assert status == 408 and "within 100 s" in body["detail"]
    assert clock.now() == 4 * 29.0  # the fourth gap crossed the deadline


# -- Last-Event-ID ------------------------------------------------------------------------


def test_a_bad_last_event_id_is_400_without_a_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    service = service_at(tmp_path / "ws", SystemClock())
    app = create_app(service, run_workers=False, heartbeat_s=0.05)
    caplog.set_level(logging.DEBUG)
    with serving(app, service) as served, httpx.Client(base_url=served.base, timeout=10) as c:
        job = c.post("/v1/bugs", json={"example": "invoice"}).json()["id"]
        for bad in ("²", "9" * 5000, "-1", "1.5", "+7", "0x10", "9" * 19):
            events = f"/v1/bugs/{job}/events"
            # a stream: before the fix "9" * 19 was taken, and a stream does not end
            with c.stream("GET", events, headers={"Last-Event-ID": bad.encode()}) as r:
                assert r.status_code == 400, (bad[:20], r.status_code)
                detail = json.loads(r.read())["detail"]
            assert "Last-Event-ID" in detail and "\n" not in detail and len(detail) < 200
        with c.stream("GET", f"/v1/bugs/{job}/events", headers={"Last-Event-ID": "3"}) as ok:
            assert ok.status_code == 200
            assert next(ok.iter_lines()).startswith(":")  # the stream runs (a keep-alive)
    assert "Traceback" not in caplog.text
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


# -- validation errors do not echo ---------------------------------------------------------


@pytest.fixture
async def local(tmp_path: Path) -> AsyncIterator[InProcess]:
    """A key-less app in process, addressed as its own ``localhost:8000``."""
    clock = FakeClock()
    service = service_at(tmp_path / "ws", clock, failing_investigator)
    app = create_app(service, run_workers=False)
    async with in_process(app, service, base_url="http://localhost:8000", workers=False) as c:
        yield InProcess(c, service, clock)


async def test_a_large_json_body_with_an_unknown_field_is_not_echoed(local: InProcess) -> None:
    junk = "J" * (3 << 20)
    r = await local.client.post("/v1/bugs", json={"example": "invoice", "junk": junk})
    assert r.status_code in (413, 422) and len(r.content) < 2048, len(r.content)
    # the same in any content type: a JSON route's body is capped before it is read
    r = await local.client.post(
        "/v1/bugs", content=junk.encode(), headers={"content-type": "multipart/form-data"}
    )
    assert r.status_code in (413, 422) and len(r.content) < 2048, len(r.content)


async def test_a_422_names_the_field_but_never_its_value(local: InProcess) -> None:
    value, name = "V" * 50_000, "K" * 5000
    r = await local.client.post("/v1/bugs", json={"example": "invoice", name: value})
    assert r.status_code == 422 and len(r.content) < 2048, len(r.content)
    assert "VVVV" not in r.text and r.json()["detail"][0]["type"] == "extra_forbidden"
    # the upload route takes a large body, and its ``test`` field is 2,000 characters at most
    r = await local.client.post("/v1/bugs/upload", files=upload(), data={"test": value})
    assert r.status_code == 422 and len(r.content) < 2048, len(r.content)
    assert "VVVV" not in r.text


# -- error bodies name no server path -------------------------------------------------------


def _no_server_path(text: str, ws: Path) -> None:
    assert str(ws) not in text and "/tmp/" not in text and "/root" not in text, text


async def test_errors_of_a_bad_upload_and_a_failed_job_name_no_server_path(
    local: InProcess,
) -> None:
    ws = local.service.workspace.root
    r = await local.client.post("/v1/bugs/upload", files=upload(report=b""))
    assert r.status_code == 400 and "is empty" in r.json()["detail"]
    _no_server_path(r.text, ws)
    assert "input/r.md" in r.json()["detail"]  # still says which file, relative to the job

    r = await local.client.post("/v1/bugs/upload", files=upload())
    assert r.status_code == 202, r.text
    job = r.json()["id"]
    async with asyncio.TaskGroup() as tg:
        workers = tg.create_task(local.service.run())
        async with local.client.stream("GET", f"/v1/bugs/{job}/events") as events:
            stream = "\n".join([line async for line in events.aiter_lines()])
        workers.cancel()
    assert "event: failed" in stream and "FileNotFoundError" in stream
    status = await local.client.get(f"/v1/bugs/{job}")
    assert status.json()["state"] in ("failed", "dead")
    assert "missing/conftest.py" in status.json()["error"]
    listed = await local.client.get("/v1/bugs")
    report = await local.client.get(f"/v1/bugs/{job}/report")
    for text in (stream, status.text, listed.text, report.text):
        _no_server_path(text, ws)


# -- a key-less server answers only its own Host and Origin -------------------------------------


async def _jobs(svc: InProcess) -> list[Path]:
    return list((svc.service.workspace.root / "jobs").iterdir())


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Host": "evil.example:8000"},
        {"Host": "evil.example:8000", "Origin": "http://evil.example:8000"},  # DNS rebinding
        {"Origin": "http://localhost:3000"},  # another page on this machine
        {"Origin": "null"},  # a sandboxed frame, a file:// page
    ],
)
async def test_a_foreign_origin_or_host_is_refused_and_nothing_runs(
    local: InProcess, headers: dict[str, str]
) -> None:
    r = await local.client.post("/v1/bugs/upload", files=upload(), headers=headers)
    assert r.status_code == 403, r.text
    assert "\n" not in r.json()["detail"]
    r = await local.client.post("/v1/bugs", json={"example": "invoice"}, headers=headers)
    assert r.status_code == 403
    assert await local.service.depth() == 0 and await _jobs(local) == []
    assert (await local.client.get("/v1/bugs", headers=headers)).status_code == 403


async def test_the_servers_own_pages_still_work(local: InProcess) -> None:
    own = {"Origin": "http://localhost:8000"}
    assert (await local.client.get("/")).status_code == 200  # the dashboard
    r = await local.client.post("/v1/bugs", json={"example": "invoice"}, headers=own)
    assert r.status_code == 202, r.text
    r = await local.client.post(
        "/v1/bugs/upload", files=upload(), headers={**own, "Host": "127.0.0.1:8000"}
    )
    assert r.status_code == 403  # the Origin is localhost:8000, the Host is not: not same-origin
    r = await local.client.post(
        "/v1/bugs/upload",
        files=upload(),
        headers={"Host": "127.0.0.1:9999", "Origin": "http://127.0.0.1:9999"},  # a forwarded port
    )
    assert r.status_code == 202, r.text
    async with local.client.stream("GET", "/v1/bugs") as listed:
        assert listed.status_code == 200


async def test_allowed_hosts_and_keyed_servers(tmp_path: Path) -> None:
    clock = FakeClock()
    named = create_app(
        service_at(tmp_path / "a", clock), run_workers=False, allowed_hosts=["FixBugs.internal"]
    )
    async with httpx.AsyncClient(
        transport=StreamingASGITransport(named), base_url="http://fixbugs.internal"
    ) as c:
        r = await c.post("/v1/bugs", json={"example": "invoice"})
        assert r.status_code == 202, r.text
        evil = await c.post("/v1/bugs", json={"example": "invoice"}, headers={"Host": "evil"})
        assert evil.status_code == 403
    # with keys, the key is the guard as before: a page has none, and no CORS header
    # lets a foreign page send one
    keyed = create_app(
        service_at(tmp_path / "b", clock), keys=ApiKeys({KEY: "acme"}), run_workers=False
    )
    async with httpx.AsyncClient(
        transport=StreamingASGITransport(keyed), base_url="http://evil.example"
    ) as c:
        hostile = {"Origin": "http://evil.example"}
        r = await c.post("/v1/bugs", json={"example": "invoice"}, headers=hostile)
        assert r.status_code == 401
        r = await c.post(
            "/v1/bugs", json={"example": "invoice"}, headers={**hostile, "X-API-Key": KEY}
        )
        assert r.status_code == 202 and "access-control-allow-origin" not in r.headers


def test_a_rebound_host_is_refused_on_a_real_socket(tmp_path: Path) -> None:
    service = service_at(tmp_path / "ws", SystemClock())
    app = create_app(service, run_workers=False)
    with serving(app, service) as served, httpx.Client(base_url=served.base, timeout=10) as c:
        evil = {"Host": f"evil.example:{served.port}", "Origin": "http://evil.example"}
        r = c.post("/v1/bugs/upload", files=upload(), headers=evil)
        assert r.status_code == 403
        assert list((service.workspace.root / "jobs").iterdir()) == []
        r = c.post("/v1/bugs/upload", files=upload(), headers={"Origin": served.base})
        assert r.status_code == 202, r.text
