"""Through the service, a coverage report naming the key file leaks no key (issue 21, item 3).

Seen: tenant A uploaded a repository that shadows ``coverage``; the coverage
report its test run wrote named the ``--api-key-file``, the fix stage read
that file on the host, as root, and A's report and event stream held both
tenants' API keys (a rejected candidate that swapped the two key lines).
Here the service runs as ``fixbugs serve`` wires it (:func:`build_app`, keys
read from a key file, the real agent without a model, a real sandbox), and
A uploads that repository as a ``.tgz``. Its coverage report names the key
file absolutely, by ``..`` forms and through ``/proc/self/root``,
``/proc/1/root``, ``/proc/1/cwd`` and ``/proc/self/cwd``. No secret of the
key file may reach A's report, status, listing or event stream (the API
serves no markdown), and B sees nothing of A's bug.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from hostile import NEEDS_NAMESPACES, SHADOW_FORMS, coverage_shadow
from svckit import in_process, tar_gz

from fixbugs.service import ApiKeys
from fixbugs.service.serve import ServeConfig, build_app

pytestmark = NEEDS_NAMESPACES

CALC = "def add(a, b):\n    return a - b\n"
TESTS = (
    "from pkg.calc import add\n\n\ndef test_ok():\n    assert add(0, 0) == 0\n\n\n"
    "def test_bad():\n    assert add(2, 2) == 5\n"
)  # no candidate passes test_bad: every one is tried, and each rejection is shown
# the failing test alone covers lines 1-3 of every file the shadow's report names
CONTEXTS = {str(n): ["test_attack.test_bad"] for n in (1, 2, 3)}
TEST_CMD = "python -m pytest -p no:cacheprovider test_attack.py"


@dataclass(frozen=True)
class KeyFile:
    """The service's ``--api-key-file``: two tenants' keys, and a comment that is secret too.

    Each key line also parses as Python (``acme: KEY``), so a repair template
    that read the file would offer to swap the two keys, and say so.
    """

    path: Path
    acme: str
    globex: str
    comment: str

    @classmethod
    def write(cls, folder: Path) -> KeyFile:
        folder.mkdir()
        tag = uuid.uuid4().hex
        keys = cls(folder / "api-keys", f"ACMEKEY{tag}", f"GLOBEXKEY{tag}", f"ROTATION{tag}")
        keys.path.write_text(
            f"acme:{keys.acme}\nglobex:{keys.globex}\n# rotated by {keys.comment}\n"
        )
        return keys

    def secrets(self) -> tuple[str, ...]:
        return self.acme, self.globex, self.comment


def repository(keyfile: Path) -> dict[str, str]:
    """Tenant A's repository: a failing test, and a ``coverage`` shadow naming ``keyfile``."""
    return {
        "pkg/__init__.py": "",
        "pkg/calc.py": CALC,
        "test_attack.py": TESTS,
        **coverage_shadow([str(keyfile)], ["pkg/calc.py"], CONTEXTS),
    }


def tgz(files: dict[str, str]) -> bytes:
    return tar_gz({f"repo/{rel}": text.encode() for rel, text in files.items()})


@dataclass
class Svc:
    client: httpx.AsyncClient
    keys: KeyFile


@pytest.fixture
async def svc(tmp_path: Path) -> AsyncIterator[Svc]:
    keys = KeyFile.write(tmp_path / "secrets")
    cfg = ServeConfig(
        workspace=tmp_path / "ws",
        workers=1,
        capacity=4,
        tenant_keys=dict(ApiKeys.from_file(keys.path).items()),  # as --api-key-file
    )
    app, service, telemetry = build_app(cfg, models=None, run_workers=False)
    try:
        async with in_process(app, service) as client:
            yield Svc(client, keys)
    finally:
        telemetry.shutdown()


async def events_to_end(client: httpx.AsyncClient, job: str, key: str) -> str:
    """The job's whole event stream, read until the service's ``end`` event."""
    lines = []
    async with client.stream("GET", f"/v1/bugs/{job}/events", headers={"X-API-Key": key}) as r:
        assert r.status_code == 200
        async for line in r.aiter_lines():
            lines.append(line)
            if line.startswith("event: end"):
                break
    return "\n".join(lines)


async def test_a_coverage_report_naming_the_key_file_leaks_no_key(svc: Svc) -> None:
    acme = {"X-API-Key": svc.keys.acme}
    r = await svc.client.post(
        "/v1/bugs/upload",
        headers=acme,
        files={
            "report": ("report.md", b"# add is wrong\n\n`add(2, 2)` gives 0, not 4.\n"),
            "repo": ("repo.tgz", tgz(repository(svc.keys.path))),
        },
        data={"test": TEST_CMD},
    )
    assert r.status_code == 202, r.text
    job = r.json()["id"]
    async with asyncio.timeout(240):  # liveness bound only: the stream ends with the job
        events = await events_to_end(svc.client, job, svc.keys.acme)
    status = await svc.client.get(f"/v1/bugs/{job}", headers=acme)
    listed = await svc.client.get("/v1/bugs", headers=acme)
    report = await svc.client.get(f"/v1/bugs/{job}/report", headers=acme)
    assert status.json()["state"] == "done", status.text
    assert report.status_code == 200, report.text
    shown = {"events": events, "status": status.text, "list": listed.text, "report": report.text}
    for secret in svc.keys.secrets():
        assert not [where for where, text in shown.items() if secret in text], secret
    # the attack ran: SBFL read the shadow's report and dropped every name of the key file,
    # and the fix stage tried candidates and showed each rejection in the events
    data = report.json()
    dropped = f"the coverage report named {SHADOW_FORMS} path(s) that name no file"
    assert any(n.startswith(dropped) for n in data["notes"]), data["notes"]
    assert data["repair"]["candidates"] > 0 and "rejected #" in events
    listed_files = set(repository(svc.keys.path))
    assert {f["path"] for f in data["ranked_files"]} <= listed_files
    assert {r["path"] for r in data["suspicious_regions"]} == {"pkg/calc.py"}
    # the other tenant sees nothing of the bug, and its own key is nowhere either
    globex = {"X-API-Key": svc.keys.globex}
    assert (await svc.client.get("/v1/bugs", headers=globex)).json() == []
    theirs = await svc.client.get(f"/v1/bugs/{job}/report", headers=globex)
    assert theirs.status_code == 404 and svc.keys.globex not in theirs.text
