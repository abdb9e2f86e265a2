"""Tenants cannot see each other; malformed archives answer 400; inputs do not outlive jobs.

Issue 14: any valid key listed every id and read every report, ``?key=``
worked on every route, and a 300-character file name (or a file and a
folder at one path) in an archive answered 500 with a traceback. The
investigator here puts the uploaded repository's secret into the report,
as a real report quotes code, so a cross-tenant read would show it.
"""

from __future__ import annotations

import asyncio
import io
import json
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from svckit import InProcess, in_process, memory_service, tar_gz, whole_report

from agentrt import FakeClock
from fixbugs.run.progress import EventSink, ProgressEvent, RunFinishedData
from fixbugs.run.report_schema import ReportModel
from fixbugs.service import ApiKeys, BugSpec, create_app

ACME, GLOBEX, METRICS = "acme-key-1", "globex-key-2", "metrics-key-3"
TTL_S = 3600.0


async def leaky_investigator(spec: BugSpec, sink: EventSink) -> ReportModel:
    sink(ProgressEvent("run_started", "run", 0.0, "investigating"))
    secret = await asyncio.to_thread((spec.repo / "secret.txt").read_text)
    sink(ProgressEvent("run_finished", "run", 1.0, "done", RunFinishedData(validated=False)))
    return whole_report(spec.title, quoted=secret)


@pytest.fixture
async def svc(tmp_path: Path) -> AsyncIterator[InProcess]:
    clock = FakeClock()
    service = memory_service(tmp_path / "ws", leaky_investigator, clock=clock, report_ttl_s=TTL_S)

    async def exposition() -> tuple[bytes, str]:
        return b"fixbugs_up 1\n", "text/plain"

    app = create_app(
        service,
        keys=ApiKeys({ACME: "acme", GLOBEX: "globex"}),
        metrics=exposition,
        metrics_key=METRICS,
        run_workers=False,
    )
    async with in_process(app, service) as client:
        yield InProcess(client, service, clock)


def zip_of(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


async def upload(client: httpx.AsyncClient, key: str, archive: bytes, name: str) -> httpx.Response:
    return await client.post(
        "/v1/bugs/upload",
        headers={"X-API-Key": key},
        files={
            "report": ("report.md", b"# It breaks\n\nadd(2, 2) returns 0\n"),
            "repo": (name, archive),
        },
    )


async def finish(client: httpx.AsyncClient, job: str, key: str) -> list[str]:
    """Follow the job's event stream to its end (the service says when)."""
    kinds = []
    async with client.stream("GET", f"/v1/bugs/{job}/events", headers={"X-API-Key": key}) as r:
        assert r.status_code == 200
        async for line in r.aiter_lines():
            if line.startswith("event: "):
                kinds.append(line[7:])
    return kinds


async def test_a_tenant_sees_only_its_own_bugs(svc: InProcess) -> None:
    archive = tar_gz([("repo/secret.txt", b"ACME-SECRET"), ("repo/app.py", b"x = 1\n")])
    r = await upload(svc.client, ACME, archive, "repo.tar.gz")
    assert r.status_code == 202, r.text
    job = r.json()["id"]
    assert (await finish(svc.client, job, ACME))[-1] == "end"
    mine = await svc.client.get(f"/v1/bugs/{job}/report", headers={"X-API-Key": ACME})
    assert mine.status_code == 200 and mine.json()["quoted"] == "ACME-SECRET"
    # globex: not listed, and every route answers as for an id that does not exist
    listed = await svc.client.get("/v1/bugs", headers={"X-API-Key": GLOBEX})
    assert listed.status_code == 200 and listed.json() == []
    missing = await svc.client.get("/v1/bugs/0123456789abcdef", headers={"X-API-Key": GLOBEX})
    for path in ("", "/report", "/events"):
        theirs = await svc.client.get(f"/v1/bugs/{job}{path}", headers={"X-API-Key": GLOBEX})
        assert theirs.status_code == 404, (path, theirs.text)
        assert "ACME-SECRET" not in theirs.text
        assert theirs.json()["detail"].replace(job, "ID") == missing.json()["detail"].replace(
            "0123456789abcdef", "ID"
        )
    acme_list = await svc.client.get("/v1/bugs", headers={"X-API-Key": ACME})
    assert [b["id"] for b in acme_list.json()] == [job]


async def test_the_key_query_parameter_works_only_for_the_event_stream(svc: InProcess) -> None:
    archive = tar_gz([("repo/secret.txt", b"s")])
    job = (await upload(svc.client, ACME, archive, "repo.tar.gz")).json()["id"]
    for path in ("/v1/bugs", f"/v1/bugs/{job}", f"/v1/bugs/{job}/report", "/v1/pipeline"):
        r = await svc.client.get(path, params={"key": ACME})
        assert r.status_code == 401, path
    async with svc.client.stream("GET", f"/v1/bugs/{job}/events", params={"key": ACME}) as r:
        assert r.status_code == 200
        kinds = [ln async for ln in r.aiter_lines() if ln.startswith("event: ")]
    assert kinds[-1] == "event: end"
    wrong = await svc.client.get(f"/v1/bugs/{job}/events", params={"key": GLOBEX})
    assert wrong.status_code == 404


async def test_metrics_can_be_put_behind_a_key(svc: InProcess) -> None:
    assert (await svc.client.get("/metrics")).status_code == 401
    assert (await svc.client.get("/metrics", headers={"X-API-Key": ACME})).status_code == 401
    ok = await svc.client.get("/metrics", headers={"X-API-Key": METRICS})
    assert ok.status_code == 200 and "fixbugs_up" in ok.text
    assert (await svc.client.get("/healthz")).status_code == 200


async def test_inputs_go_when_the_job_ends_and_reports_after_their_time(svc: InProcess) -> None:
    archive = tar_gz([("repo/secret.txt", b"ACME-SECRET")])
    job = (await upload(svc.client, ACME, archive, "repo.tar.gz")).json()["id"]
    await finish(svc.client, job, ACME)
    assert not svc.service.workspace.job_dir(job).exists()
    report = await svc.client.get(f"/v1/bugs/{job}/report", headers={"X-API-Key": ACME})
    assert report.status_code == 200
    svc.clock.advance(TTL_S + 1)
    purged = await svc.service.purge_expired()
    # the service's own sweep wakes on the same clock advance and may purge it first
    assert purged == (job,) or (purged == () and svc.service.index.get(job) is None)
    gone = await svc.client.get(f"/v1/bugs/{job}/report", headers={"X-API-Key": ACME})
    assert gone.status_code == 404
    listed = await svc.client.get("/v1/bugs", headers={"X-API-Key": ACME})
    assert listed.json() == []


@pytest.mark.parametrize(
    ("name", "archive"),
    [
        ("long-name.tar.gz", tar_gz([("repo/" + "a" * 300 + ".py", b"x")])),
        ("long-name.zip", zip_of([("repo/" + "b" * 300 + ".py", b"x")])),
        ("file-then-dir.tar.gz", tar_gz([("repo/a", b"file"), ("repo/a/b.py", b"x")])),
        (
            "dir-then-file.tar.gz",
            tar_gz([("repo/a", None), ("repo/a/c.py", b"x"), ("repo/a", b"f")]),
        ),
        ("file-then-dir.zip", zip_of([("repo/a", b"file"), ("repo/a/b.py", b"x")])),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
async def test_malformed_archives_answer_400_and_keep_nothing(
    svc: InProcess, name: str, archive: bytes
) -> None:
    r = await upload(svc.client, ACME, archive, name)
    assert r.status_code == 400, r.text
    detail = r.json()["detail"]
    assert "\n" not in detail and "Traceback" not in detail and len(detail) < 300
    jobs = svc.service.workspace.root / "jobs"
    assert list(jobs.iterdir()) == []
    assert json.loads((await svc.client.get("/v1/bugs", headers={"X-API-Key": ACME})).text) == []
