"""A tenant's source leaves with its job: no index cache row of it stays (issue 41, item 5).

Seen: a run indexed the uploaded repository into the shared index cache
(``~/.cache/fixbugs/index``, one SQLite file for every run), so a tenant's
source stayed on the server after its job was deleted, in a file every
other tenant's run reads. Now each job's run keeps its index cache in the
job's own directory, deleted when the job ends. Here the service runs as
``fixbugs serve`` wires it (the real agent without a model, both modes), the
user's cache pointed at a folder of the test's own; after the job ends, every
index cache file under the test's folders is read directly, row by row and
byte by byte, for the tenant's secret.
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from pathlib import Path

import pytest
from hostile import NEEDS_NAMESPACES
from svckit import in_process, tar_gz

from fixbugs.service.serve import ServeConfig, build_app

pytestmark = NEEDS_NAMESPACES

KEY = "tenant-data-key"


def repository(secret: str) -> bytes:
    calc = f'SECRET = "{secret}"\n\n\ndef add(a, b):\n    return a - b\n'
    tests = "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    files = {"pkg/__init__.py": "", "pkg/calc.py": calc, "test_calc.py": tests}
    return tar_gz({f"repo/{rel}": text.encode() for rel, text in files.items()})


def rows_holding(db_path: Path, secret: str) -> list[str]:
    """Every row of every table of the SQLite file that holds ``secret`` (any case)."""
    found = []
    with sqlite3.connect(db_path) as db:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in db.execute(f'SELECT * FROM "{table}"'):
                text = " ".join(str(c) for c in row)
                if secret.lower() in text.lower():
                    found.append(f"{db_path.name}:{table}")
    return found


@pytest.mark.parametrize("whole_bug", [False, True], ids=["staged", "whole-bug"])
async def test_no_index_row_of_a_tenants_source_outlives_its_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whole_bug: bool
) -> None:
    shared = tmp_path / "user-cache" / "index"  # the cache a CLI run (and the old service) uses
    monkeypatch.setenv("FIXBUGS_INDEX_DIR", str(shared))
    secret = f"TenantSecret{uuid.uuid4().hex}"
    cfg = ServeConfig(
        workspace=tmp_path / "ws", workers=1, capacity=4, tenant_keys={KEY: "acme"},
        whole_bug=whole_bug,
    )  # fmt: skip
    app, service, telemetry = build_app(cfg, models=None, run_workers=False)
    headers = {"X-API-Key": KEY}
    try:
        async with in_process(app, service) as client:
            r = await client.post(
                "/v1/bugs/upload",
                headers=headers,
                files={
                    "report": ("r.md", b"# add is wrong\n\n`add(2, 2)` gives 0, not 4.\n"),
                    "repo": ("repo.tar.gz", repository(secret)),
                },
                data={"test": "python -m pytest -p no:cacheprovider test_calc.py"},
            )
            assert r.status_code == 202, r.text
            job = r.json()["id"]
            async with asyncio.timeout(300):  # liveness only: the stream ends with the job
                async with client.stream("GET", f"/v1/bugs/{job}/events", headers=headers) as s:
                    async for line in s.aiter_lines():
                        if line.startswith("event: end"):
                            break
            status = (await client.get(f"/v1/bugs/{job}", headers=headers)).json()
            report = (await client.get(f"/v1/bugs/{job}/report", headers=headers)).json()
    finally:
        telemetry.shutdown()
    assert status["state"] == "done", status
    # the run indexed the tree (its ranking comes from the index)
    assert "pkg/calc.py" in {f["path"] for f in report["ranked_files"]}, report["ranked_files"]
    assert not service.workspace.job_dir(job).exists()
    assert index_files_holding(tmp_path, secret) == []


def index_files_holding(root: Path, secret: str) -> list[str]:
    """Every index cache file under ``root`` holding ``secret``: its SQLite rows, read
    directly, and the raw bytes of every file of an ``index`` folder (BM25 tables too)."""
    found = [hit for db in sorted(root.rglob("index.sqlite")) for hit in rows_holding(db, secret)]
    needle = secret.lower().encode()
    for p in sorted(root.rglob("*")):
        if (
            p.is_file()
            and "index" in p.relative_to(root).parts
            and needle in p.read_bytes().lower()
        ):
            found.append(str(p.relative_to(root)))
    return found
