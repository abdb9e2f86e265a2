from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from svckit import STAGE_ORDER, Harness, tar_gz

from fixbugs.queued import QUEUE_STAGES

# the queue stage a bug enters first, in each of the service's modes
FIRST_STAGE = {"staged": QUEUE_STAGES[0], "whole-bug": "investigate"}


async def sse_events(client: httpx.AsyncClient, path: str, **kw: Any) -> list[tuple[str, dict]]:
    out: list[tuple[str, dict]] = []
    async with client.stream("GET", path, **kw) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        kind = None
        async for line in r.aiter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind:
                out.append((kind, json.loads(line[6:])))
    return out


async def test_example_bug_runs_and_streams_its_stages_in_order(harness: Harness) -> None:
    r = await harness.client.post("/v1/bugs", json={"example": "invoice"})
    assert r.status_code == 202, r.text
    job = r.json()["id"]
    events = await sse_events(harness.client, f"/v1/bugs/{job}/events")
    kinds = [k for k, _ in events]
    started = [e["stage"] for k, e in events if k == "stage_started"]
    assert started == list(STAGE_ORDER)
    assert kinds[0] == "run_started" and kinds[-1] == "end"
    assert events[-1][1] == {"state": "done"}
    st = (await harness.client.get(f"/v1/bugs/{job}")).json()
    assert st["state"] == "done" and set(st["stages"].values()) == {"done"}
    assert st["title"].startswith("Bulk discount")
    rep = (await harness.client.get(f"/v1/bugs/{job}/report")).json()
    assert rep["validated"] is True
    spec = harness.investigator.specs[0]
    assert spec.repo.as_posix().endswith("examples/invoice/repo") and spec.logs


async def test_sse_resumes_after_last_event_id(harness: Harness) -> None:
    job = (await harness.client.post("/v1/bugs", json={"example": "invoice"})).json()["id"]
    first = await sse_events(harness.client, f"/v1/bugs/{job}/events")
    again = await sse_events(
        harness.client, f"/v1/bugs/{job}/events", headers={"Last-Event-ID": "5"}
    )

    def progress(evs: list[tuple[str, dict]]) -> list[dict]:
        return [e for k, e in evs if k not in ("status", "end")]

    assert progress(again) == progress(first)[5:]
    assert again[-1] == ("end", {"state": "done"})


@pytest.mark.parametrize("harness", [{"workers": False, "capacity": 2}], indirect=True)
async def test_full_queue_answers_429_with_retry_after_and_keeps_nothing(
    harness: Harness,
) -> None:
    for _ in range(2):
        assert (
            await harness.client.post("/v1/bugs", json={"example": "invoice"})
        ).status_code == 202
    r = await harness.client.post("/v1/bugs", json={"example": "invoice"})
    assert r.status_code == 429
    assert int(r.headers["Retry-After"]) >= 1
    assert "full" in r.json()["detail"]
    jobs = list((harness.service.workspace.root / "jobs").iterdir())
    assert len(jobs) == 2  # the refused bug left no directory behind
    assert len((await harness.client.get("/v1/bugs")).json()) == 2
    metrics = (await harness.client.get("/metrics")).text
    assert f'agentrt_queue_depth{{stage="{FIRST_STAGE[harness.mode]}"}} 2.0' in metrics
    assert "agentrt_rejected_total 1.0" in metrics


@pytest.mark.parametrize("harness", [{"workers": False}], indirect=True)
async def test_report_is_409_until_done_and_404_for_unknown(harness: Harness) -> None:
    job = (await harness.client.post("/v1/bugs", json={"example": "invoice"})).json()["id"]
    r = await harness.client.get(f"/v1/bugs/{job}/report")
    assert r.status_code == 409 and "queued" in r.json()["detail"]
    assert (await harness.client.get("/v1/bugs/nosuchbug/report")).status_code == 404
    assert (await harness.client.get("/v1/bugs/..%2F..%2Fetc")).status_code == 404


@pytest.mark.parametrize("harness", [{"keys": ("s3cret",)}], indirect=True)
async def test_api_keys_are_required_and_accepted_three_ways(harness: Harness) -> None:
    c = harness.client
    assert (await c.post("/v1/bugs", json={"example": "invoice"})).status_code == 401
    assert (await c.get("/v1/bugs", headers={"X-API-Key": "wrong"})).status_code == 401
    r = await c.post("/v1/bugs", json={"example": "invoice"}, headers={"X-API-Key": "s3cret"})
    assert r.status_code == 202
    job = r.json()["id"]
    bearer = {"Authorization": "Bearer s3cret"}
    assert (await c.get(f"/v1/bugs/{job}", headers=bearer)).status_code == 200
    events = await sse_events(c, f"/v1/bugs/{job}/events?key=s3cret")
    assert events[-1][0] == "end"
    assert (await c.get("/")).status_code == 200  # the dashboard page itself is public


async def test_upload_unpacks_the_repository_inside_the_job_directory(harness: Harness) -> None:
    archive = tar_gz({"proj/app.py": b"x = 1\n", "proj/tests/test_app.py": b"def test(): pass\n"})
    r = await harness.client.post(
        "/v1/bugs/upload",
        files=[
            ("report", ("bug.md", b"# Crash in app\n\nIt fails.\n", "text/markdown")),
            ("repo", ("proj.tar.gz", archive, "application/gzip")),
            ("logs", ("app.log", b"ERROR boom\n", "text/plain")),
        ],
        data={"test": "pytest tests/test_app.py"},
    )
    assert r.status_code == 202, r.text
    await sse_events(harness.client, r.json()["events_url"])
    spec = harness.investigator.specs[0]
    root = harness.service.workspace.root
    assert spec.repo.as_posix().endswith("/repo/proj")
    assert all(p.is_relative_to(root) for p in [spec.repo, spec.report, *spec.logs])
    assert spec.test == "pytest tests/test_app.py"
    assert spec.title == "Crash in app"


@pytest.mark.parametrize("member", ["../evil.py", "/etc/evil", "a/../../evil"])
async def test_upload_with_an_escaping_archive_path_is_rejected(
    harness: Harness, member: str
) -> None:
    r = await harness.client.post(
        "/v1/bugs/upload",
        files=[
            ("report", ("bug.md", b"# t\n\nb\n", "text/markdown")),
            ("repo", ("r.tar.gz", tar_gz({member: b"x"}), "application/gzip")),
        ],
    )
    assert r.status_code == 400
    assert "escape" in r.json()["detail"] or "absolute" in r.json()["detail"]
    assert list((harness.service.workspace.root / "jobs").iterdir()) == []
    assert not (harness.service.workspace.root.parent / "evil.py").exists()


@pytest.mark.parametrize("harness", [{"max_request_bytes": 2000}], indirect=True)
async def test_request_over_the_body_limit_is_413(harness: Harness) -> None:
    r = await harness.client.post(
        "/v1/bugs/upload",
        files=[
            ("report", ("bug.md", b"# t\n" + b"x" * 5000, "text/markdown")),
            ("repo", ("r.tar.gz", tar_gz({"a.py": b"x"}), "application/gzip")),
        ],
    )
    assert r.status_code == 413
    assert "limit" in r.json()["detail"]


async def test_bad_json_and_unknown_example_are_4xx(harness: Harness) -> None:
    assert (await harness.client.post("/v1/bugs", json={"example": "nope"})).status_code == 422
    r = await harness.client.post(
        "/v1/bugs", content=b"{", headers={"content-type": "application/json"}
    )
    assert r.status_code == 422


async def test_pipeline_snapshot_and_metrics_after_a_run(harness: Harness) -> None:
    job = (await harness.client.post("/v1/bugs", json={"example": "invoice"})).json()["id"]
    await sse_events(harness.client, f"/v1/bugs/{job}/events")
    snap = (await harness.client.get("/v1/pipeline")).json()
    stage = {"staged": "+".join(QUEUE_STAGES), "whole-bug": "investigate"}[harness.mode]
    assert snap["queue"] == {"stage": stage, "depth": 0, "capacity": 4}
    assert snap["jobs"]["done"] == 1 and snap["admission"]["accepted"] == 1
    assert snap["flow"] == {"limits": [], "retry_budget": None}
    text = (await harness.client.get("/metrics")).text
    assert 'agentrt_stage_seconds_count{stage="analysis"} 1.0' in text
    assert 'agentrt_retries_total{stage="analysis"} 1.0' in text
    assert 'agentrt_tokens_total{direction="output",stage="analysis"} 20.0' in text


async def test_status_shows_the_running_stage_live(harness: Harness) -> None:
    hold = asyncio.Event()
    harness.investigator.hold = hold
    job = (await harness.client.post("/v1/bugs", json={"example": "invoice"})).json()["id"]
    await harness.investigator.started.wait()
    st = (await harness.client.get(f"/v1/bugs/{job}")).json()
    assert st["state"] == "running" and st["current_stage"] is None
    assert (await harness.client.get("/v1/pipeline")).json()["workers"]["busy"] == 1
    hold.set()
    events = await sse_events(harness.client, f"/v1/bugs/{job}/events")
    assert events[-1] == ("end", {"state": "done"})


async def test_a_failing_investigation_ends_dead_after_its_attempts(harness: Harness) -> None:
    harness.investigator.fail = True
    job = (await harness.client.post("/v1/bugs", json={"example": "invoice"})).json()["id"]
    events = await sse_events(harness.client, f"/v1/bugs/{job}/events")
    assert [e["data"]["final"] for k, e in events if k == "failed"] == [False, True]
    st = (await harness.client.get(f"/v1/bugs/{job}")).json()
    assert st["state"] in ("failed", "dead") and "scripted failure" in st["error"]


async def test_openapi_spec_lists_the_api(harness: Harness) -> None:
    spec = (await harness.client.get("/openapi.json")).json()
    assert {
        "/v1/bugs",
        "/v1/bugs/upload",
        "/v1/bugs/{bug_id}",
        "/v1/bugs/{bug_id}/events",
        "/v1/bugs/{bug_id}/report",
        "/v1/pipeline",
    } <= set(spec["paths"])
    assert "429" in spec["paths"]["/v1/bugs"]["post"]["responses"]
