"""deploy/compose.yaml's topology as processes: the dashboard, a bug end to end, its events.

Issue 48's done-when: where Docker does not run, the compose file's services run as
local processes (:mod:`topology`): the API (``--workers 0``), the model-stage worker and
two sandbox-stage workers (three workers), and ``redis-server`` on a free port. The
dashboard is served, the bundled example bug submitted over the HTTP API finishes with
its validated report, and its event stream shows every stage, each run by a worker of
the service the compose file gives that stage.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from sse import Followed, follow
from topology import Topology, load_compose

pytestmark = pytest.mark.needs_root

KEY = "deploy-smoke-key"
# the queue stages each compose service's workers serve, and the agent's stages in them
MODEL_STAGES = {"analysis", "file_relevance", "root_cause", "fix"}
SANDBOX_STAGES = {"reproduction", "validation"}


def test_the_compose_file_names_the_topology_the_issue_asks_for() -> None:
    services = load_compose()
    assert set(services) == {"redis", "api", "model-worker", "sandbox-worker"}
    api = services["api"].command
    assert api[:2] == ("fixbugs", "serve") and api[api.index("--workers") + 1] == "0"
    assert api[api.index("--queue") + 1] == "redis://redis:6379"

    def stages(name: str) -> set[str]:
        cmd = services[name].command
        return {cmd[i + 1] for i, a in enumerate(cmd) if a == "--stage"}

    assert stages("model-worker") == {"analysis", "root_cause"}
    assert stages("sandbox-worker") == {"reproduction", "repair"}
    assert sum(services[w].replicas for w in ("model-worker", "sandbox-worker")) == 3
    redis = services["redis"].command
    assert redis[redis.index("--appendonly") + 1] == "yes"
    assert redis[redis.index("--maxmemory-policy") + 1] == "noeviction"


async def _submit_and_follow(url: str) -> tuple[str, str, str, Followed, dict[str, object]]:
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        page = await client.get("/")
        r = await client.post("/v1/bugs", json={"example": "invoice"}, headers={"X-API-Key": KEY})
        assert r.status_code == 202, r.text
        job = r.json()["id"]
        seen = await follow(client, job, KEY)
        report = (await client.get(f"/v1/bugs/{job}/report", headers={"X-API-Key": KEY})).json()
        return job, page.headers["content-type"], page.text, seen, report


def test_api_three_workers_and_redis_as_processes_serve_a_bug_end_to_end(
    tmp_path: Path,
) -> None:
    topo = Topology(
        tmp_path,
        env={"FIXBUGS_API_KEYS": f"team:{KEY}"},
        extra_args={"model-worker": ["--no-model"]},  # the smoke test needs no endpoint
    )
    with topo:
        workers = {s: {p.name for p in topo.workers(s)} for s in topo.worker_services}
        job, ctype, page, seen, report = asyncio.run(_submit_and_follow(topo.api_url))
        job_dir_left = (topo.workspace / "jobs" / job).exists()
    assert len(workers["model-worker"]) == 1 and len(workers["sandbox-worker"]) == 2
    assert ctype.startswith("text/html") and "FixBugs" in page
    assert seen.ended == "done", topo.logs_tail()
    assert report["validated"] is True and str(report["patch"]).startswith("--- a/shop/pricing.py")
    kinds = [f.kind for f in seen.events]
    assert kinds[0] == "run_started" and "run_finished" in kinds
    ran = {(f.data["stage"], f.data["worker"]) for f in seen.events if f.kind == "stage_started"}
    assert {s for s, _ in ran} == MODEL_STAGES | SANDBOX_STAGES
    for stage, worker in ran:  # each stage ran on a worker of the service serving it
        service = "model-worker" if stage in MODEL_STAGES else "sandbox-worker"
        assert worker in workers[service], (stage, worker)
    ids = [f.id for f in seen.events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert not job_dir_left, "the bug's files outlived its end"
