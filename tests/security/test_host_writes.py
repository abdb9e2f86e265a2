"""Nothing is written on the host through what the repository's code left (issue 41, item 1).

Seen: SBFL made its scratch folder in the copy, let the tests run with it on
``PYTHONPATH``, and only then wrote its reader module there, on the host, as
root, with a write that follows links. A ``conftest.py`` of four lines
planted a link at that name and FixBugs overwrote any host file; through the
service, one tenant's upload replaced the server's ``queue.db``; the same
lines in a report's python block did it against a harmless repository.

Here every writer of the audit that writes into a copy meets its own hostile
repository: a link to a host file (root's, mode 0600, outside the copy), a
link to a host path that does not exist, a hard link to a file of the copy,
a FIFO, and the folder itself swapped for a link to a host folder, planted
where the writer writes, by code that runs in the sandbox (or directly in
the copy, where the writer's own precondition lets anything be there). The
host files must keep their bytes and mtime, no file may appear at a link's
target, the hard-linked file must keep its bytes, and the run must end
normally (a FIFO opened for writing would block it: ``timeout`` fails it).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import stat
import textwrap
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hostile import NEEDS_NAMESPACES, PY, hostile, open_sandbox, plain_context, write_repo
from svckit import in_process, tar_gz

from fixbugs.inputs import load_inputs
from fixbugs.inputs.snippets import extract_snippets
from fixbugs.localize.sbfl import SbflResult, run_sbfl
from fixbugs.sandbox import Sandbox, patching
from fixbugs.sandbox.hosttools import ToolRun
from fixbugs.sandbox.untrusted import HostFolder, UntrustedFile, remove_tree
from fixbugs.service.serve import ServeConfig, build_app
from fixbugs.stages.snippet_repro import snippet_spectrum

VICTIM = "victim.txt"  # a file of the copy that a planted hard link names
VICTIM_BYTES = "the copy's own file\n"
PLANTS = ("symlink", "new-file-link", "hardlink", "fifo", "folder-link")


@dataclass(frozen=True)
class Host:
    """Host files outside every copy: a root-only secret, and a path that must stay absent."""

    dir: Path
    secret: Path
    absent: Path
    content: bytes
    mtime_ns: int

    @classmethod
    def make(cls, tmp_path: Path) -> Host:
        folder = tmp_path / "host-only"
        folder.mkdir(mode=0o700)
        secret = folder / "secret"
        content = f"ROOT ONLY {uuid.uuid4().hex}\n".encode()
        secret.write_bytes(content)
        os.chmod(secret, 0o600)
        st = os.stat(secret)
        assert st.st_uid == 0, "the suite runs as root"
        return cls(folder, secret, folder / "created-by-attack", content, st.st_mtime_ns)

    def assert_intact(self) -> None:
        st = os.lstat(self.secret)
        assert stat.S_ISREG(st.st_mode) and st.st_mode & 0o777 == 0o600
        assert self.secret.read_bytes() == self.content, "a host file was rewritten"
        assert st.st_mtime_ns == self.mtime_ns, "a host file was written"
        assert sorted(p.name for p in self.dir.iterdir()) == ["secret"], "a host file appeared"


def plant_source(how: str, folders: str, names: Sequence[str], host: Host) -> str:
    """Python that plants ``how`` at ``names`` of each folder matching the glob ``folders``.

    A link, hard link or FIFO is planted at once; the folder is swapped for a
    link at the process's exit (after coverage saved its data, which a folder
    moved earlier would lose, and SBFL would stop before its reader).
    """
    return textwrap.dedent(
        f"""\
        import atexit, glob, os
        def plant(how={how!r}, names={list(names)!r}):
            for d in glob.glob({folders!r}):
                if how == "folder-link":
                    os.rename(d, d + ".moved")
                    os.symlink({str(host.dir)!r}, d)
                    continue
                for name in names:
                    at = os.path.join(d, name)
                    if os.path.lexists(at):
                        os.unlink(at)
                    if how == "symlink":
                        os.symlink({str(host.secret)!r}, at)
                    elif how == "new-file-link":
                        os.symlink({str(host.absent)!r}, at)
                    elif how == "hardlink":
                        os.link({VICTIM!r}, at)
                    else:
                        os.mkfifo(at)
        atexit.register(plant) if {how!r} == "folder-link" else plant()
        """
    )


TESTS = """
from pkg.calc import add


def test_ok():
    assert add(1, 1) == 2


def test_bad():
    assert add(2, 2) == 5
"""
SBFL_NAMES = ("fixbugs_sbfl_report.py",)  # where SBFL wrote its reader after the tests ran


def victim_intact(sb: Sandbox) -> None:
    assert (sb.root / VICTIM).read_text() == VICTIM_BYTES, "a hard-linked file was written"


# --- SBFL: a conftest.py plants at the reader's name ----------------------------


def has_coverage() -> bool:
    return importlib.util.find_spec("coverage") is not None


NEEDS_COVERAGE = pytest.mark.skipif(not has_coverage(), reason="needs coverage.py here")


def ended_normally(result: SbflResult, how: str, scored: str) -> None:
    """SBFL scored ``scored``; with its folder moved away, it ended on a note instead."""
    if how == "folder-link":
        assert result.notes and not result.file_scores, result
    else:
        assert scored in result.file_scores, result.notes


@NEEDS_NAMESPACES
@NEEDS_COVERAGE
@pytest.mark.timeout(240)  # a FIFO opened for writing blocks: the test fails, not the suite
@pytest.mark.parametrize("how", PLANTS)
async def test_sbfl_writes_nothing_where_the_tests_ran(
    tmp_path: Path, sandboxes: list[Sandbox], how: str
) -> None:
    host = Host.make(tmp_path)
    repo = hostile(tmp_path, TESTS)
    (repo / "conftest.py").write_text(plant_source(how, ".fixbugs-sbfl-*", SBFL_NAMES, host))
    (repo / VICTIM).write_text(VICTIM_BYTES)
    sb = open_sandbox(repo, tmp_path)
    sandboxes.append(sb)
    result = await run_sbfl(sb, Path(PY), ["test_attack.py"], baseline=sb.baseline)
    host.assert_intact()
    victim_intact(sb)
    ended_normally(result, how, "pkg/calc.py")


# --- SBFL of a report's snippet, against a harmless repository ------------------

SHOP = (
    "def checkout(prices):\n    if not prices:\n        return 0\n"
    "    return round(sum(prices), 2)\n"
)
SHOP_TESTS = "from shop import checkout\n\n\ndef test_two():\n    assert checkout([1, 2]) == 3\n"


@NEEDS_NAMESPACES
@NEEDS_COVERAGE
@pytest.mark.timeout(240)
@pytest.mark.parametrize("how", PLANTS)
async def test_a_reports_snippet_writes_nothing_on_the_host(
    tmp_path: Path, sandboxes: list[Sandbox], how: str
) -> None:
    host = Host.make(tmp_path)
    repo = write_repo(
        tmp_path / "proj",
        {"shop.py": SHOP, "tests/test_shop.py": SHOP_TESTS, VICTIM: VICTIM_BYTES},
    )
    plant = plant_source(how, ".fixbugs-sbfl-*", SBFL_NAMES, host)
    report = (
        "# checkout accepts an empty basket\n\n```python\n"
        + plant
        + "from shop import checkout\nassert checkout([]) != 0, 'an empty basket must raise'\n```\n"
    )
    (snippet,) = extract_snippets(report)
    (tmp_path / "bug.md").write_text(report)
    ctx = plain_context(load_inputs(tmp_path / "bug.md", repo).repo)
    sb = open_sandbox(repo, tmp_path)
    sandboxes.append(sb)
    forks: list[Sandbox] = []
    workspace = KeepForks(sb, forks)
    result = await snippet_spectrum(snippet, ["tests/test_shop.py"], Path(PY), ctx, workspace)
    sandboxes.extend(forks)
    host.assert_intact()
    (fork,) = forks  # SBFL ran there: its copy of the victim is the one linked
    victim_intact(fork)
    ended_normally(result, how, "shop.py")


class KeepForks:
    """``sb`` as a workspace whose forks stay open (in ``forks``) until the test looked."""

    def __init__(self, sb: Sandbox, forks: list[Sandbox]) -> None:
        self.sb, self.forks = sb, forks

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sb, name)

    def fork(self) -> KeepForks:
        fork = self.sb.fork()
        self.forks.append(fork)
        return KeepForks(fork, [])

    def close(self) -> None:
        """Left to the test's ``sandboxes`` fixture."""


# --- a patch put back after a failed ``patch``: written over what is there ----

PATCHED = ("a.py", "b.py", "c.py", "pkg/d.py")
DIFF = "".join(f"--- a/{rel}\n+++ b/{rel}\n@@ -1 +1 @@\n-x = 1\n+x = 2\n" for rel in PATCHED)


class PlantingRunner:
    """The sandbox's own patch tools; ``git apply`` fails, and the real ``patch`` is
    followed by a plant at every path it touched (as a process in the copy could),
    then reported failed, so :func:`apply_patch` puts each path back."""

    def __init__(self, sb: Sandbox, host: Host, how: str) -> None:
        self.sb, self.host, self.how = sb, host, how

    def __call__(self, argv: Sequence[str], stdin: bytes) -> ToolRun:
        if argv[0] == "git":
            return ToolRun(tuple(argv), 1, b"", b"error: planted failure")
        done = self.sb._helper(argv, stdin)
        if "--dry-run" in argv:
            return done
        root = self.sb.root
        for rel in PATCHED:
            at = root / rel
            if self.how == "folder-link":
                if rel.startswith("pkg/") and not (root / "pkg.moved").exists():
                    (root / "pkg").rename(root / "pkg.moved")
                    (root / "pkg").symlink_to(self.host.dir)
                continue
            at.unlink()
            if self.how == "symlink":
                at.symlink_to(self.host.secret)
            elif self.how == "new-file-link":
                at.symlink_to(self.host.absent)
            elif self.how == "hardlink":
                os.link(root / VICTIM, at)
            else:
                os.mkfifo(at)
        return ToolRun(tuple(argv), 1, b"", b"planted failure")


@NEEDS_NAMESPACES
@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", PLANTS)
def test_a_failed_patch_is_put_back_over_what_was_planted(
    tmp_path: Path, sandboxes: list[Sandbox], how: str
) -> None:
    if shutil.which("patch") is None:
        pytest.skip("needs GNU patch, the fallback that is put back")
    host = Host.make(tmp_path)
    repo = write_repo(tmp_path / "proj", {rel: "x = 1\n" for rel in PATCHED})
    (repo / VICTIM).write_text(VICTIM_BYTES)
    sb = open_sandbox(repo, tmp_path)
    sandboxes.append(sb)
    done = patching.apply_patch(DIFF, sb.root, PlantingRunner(sb, host, how), owner=sb.uid)
    assert not done.applied and "planted failure" in done.message
    host.assert_intact()
    victim_intact(sb)
    for rel in PATCHED:
        if how == "folder-link" and rel.startswith("pkg/"):
            continue  # its folder is a link now: nothing is put back through it
        at = sb.root / rel
        assert not at.is_symlink() and stat.S_ISREG(at.lstat().st_mode), rel
        assert at.read_text() == "x = 1\n", rel
        if sb.uid is not None:
            assert at.lstat().st_uid == sb.uid


# --- deleting a copy: links the tests left are not followed ---------------------


@NEEDS_NAMESPACES
async def test_closing_a_sandbox_follows_no_link_it_holds(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    assert shutil.rmtree.avoids_symlink_attacks  # remove_tree relies on it (Linux)
    host = Host.make(tmp_path)
    sb = open_sandbox(hostile(tmp_path, TESTS), tmp_path)
    sandboxes.append(sb)
    code = (
        f"import os; os.symlink({str(host.dir)!r}, 'to-host'); "
        f"os.makedirs('deep/er'); os.symlink({str(host.secret)!r}, 'deep/er/secret')"
    )
    ran = await sb.run([PY, "-c", code], timeout_s=60)
    assert ran.returncode == 0, ran.stderr
    sb.close()
    host.assert_intact()
    assert not sb.base.exists()


# --- the diff walks a copy full of plants -------------------------------------


@NEEDS_NAMESPACES
async def test_the_copys_diff_writes_nothing_through_its_plants(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    host = Host.make(tmp_path)
    sb = open_sandbox(hostile(tmp_path, TESTS), tmp_path)
    sandboxes.append(sb)
    code = (
        "import os\n"
        f"os.symlink({str(host.secret)!r}, '.gitignore')\n"
        "os.makedirs('a'); os.mkfifo('a/.gitignore')\n"
        f"os.makedirs('b'); os.symlink({str(host.absent)!r}, 'b/.gitignore')\n"
        f"os.makedirs('c'); open('c/x.py', 'w').write('x'); os.link('c/x.py', 'c/.gitignore')\n"
        f"os.symlink({str(host.dir)!r}, 'd')\n"
    )
    ran = await sb.run([PY, "-c", code], timeout_s=60)
    assert ran.returncode == 0, ran.stderr
    async with asyncio.timeout(120):  # liveness bound only: a FIFO opened would block
        diff = await asyncio.to_thread(sb.diff)
    host.assert_intact()
    assert "c/x.py" in diff


# --- the primitive itself -------------------------------------------------------


def test_a_write_replaces_a_planted_link_hard_link_or_fifo(tmp_path: Path) -> None:
    host = Host.make(tmp_path)
    copy = tmp_path / "copy"
    (copy / "sub").mkdir(parents=True)
    (copy / VICTIM).write_text(VICTIM_BYTES)
    (copy / "sub" / "link").symlink_to(host.secret)
    (copy / "sub" / "new").symlink_to(host.absent)
    os.link(copy / VICTIM, copy / "sub" / "hard")
    os.mkfifo(copy / "sub" / "fifo")
    with HostFolder.open(copy) as tree:
        for name in ("link", "new", "hard", "fifo"):
            tree.write(f"sub/{name}", b"ours\n", mode=0o640)
            st = os.lstat(copy / "sub" / name)
            assert stat.S_ISREG(st.st_mode) and st.st_mode & 0o777 == 0o640
            assert (copy / "sub" / name).read_bytes() == b"ours\n"
        tree.symlink("sub/link", "elsewhere")
        assert os.readlink(copy / "sub" / "link") == "elsewhere"
    host.assert_intact()
    assert (copy / VICTIM).read_text() == VICTIM_BYTES
    assert sorted(p.name for p in (copy / "sub").iterdir()) == ["fifo", "hard", "link", "new"]


def test_a_write_goes_through_no_folder_link_and_into_no_swapped_folder(tmp_path: Path) -> None:
    host = Host.make(tmp_path)
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "sub").symlink_to(host.dir)
    with HostFolder.open(copy) as tree, pytest.raises(OSError):
        tree.write("sub/secret", b"ours\n")
    made = HostFolder.make(copy, prefix=".scratch-", mode=0o777)
    with made:
        assert made.path.parent == copy and stat.S_IMODE(made.path.stat().st_mode) == 0o777
        made.path.rename(copy / "moved")
        made.path.symlink_to(host.dir)
        with pytest.raises(UntrustedFile):
            made.write("secret", b"ours\n")
    remove_tree(made.path)  # a link: refused, not followed
    host.assert_intact()


# --- through the service: one tenant's upload and the server's queue ---------


@dataclass
class Svc:
    client: httpx.AsyncClient
    workspace: Path


@pytest.fixture
async def svc(tmp_path: Path) -> AsyncIterator[Svc]:
    cfg = ServeConfig(
        workspace=tmp_path / "ws",
        workers=1,
        capacity=4,
        tenant_keys={"acme-key": "acme", "globex-key": "globex"},
    )
    app, service, telemetry = build_app(cfg, models=None, run_workers=False)
    try:
        async with in_process(app, service) as client:
            yield Svc(client, cfg.workspace.resolve())
    finally:
        telemetry.shutdown()


async def events_to_end(client: httpx.AsyncClient, job: str, key: str) -> None:
    async with client.stream("GET", f"/v1/bugs/{job}/events", headers={"X-API-Key": key}) as r:
        assert r.status_code == 200
        async for line in r.aiter_lines():
            if line.startswith("event: end"):
                return


@NEEDS_NAMESPACES
@NEEDS_COVERAGE
@pytest.mark.timeout(400)
async def test_an_upload_cannot_replace_the_servers_queue(svc: Svc, tmp_path: Path) -> None:
    host = Host.make(tmp_path)
    queue_db = svc.workspace / "queue.db"
    conftest = textwrap.dedent(
        f"""\
        import glob, os
        for d in glob.glob(".fixbugs-sbfl-*"):
            os.symlink({str(queue_db)!r}, os.path.join(d, "fixbugs_sbfl_report.py"))
        """
    )
    files = {
        "repo/pkg/__init__.py": b"",
        "repo/pkg/calc.py": b"def add(a, b):\n    return a - b\n",
        "repo/test_attack.py": TESTS.encode(),
        "repo/conftest.py": conftest.encode(),
    }
    acme = {"X-API-Key": "acme-key"}
    r = await svc.client.post(
        "/v1/bugs/upload",
        headers=acme,
        files={
            "report": ("report.md", b"# add is wrong\n\n`add(2, 2)` gives 0, not 4.\n"),
            "repo": ("repo.tgz", tar_gz(files)),
        },
        data={"test": "python -m pytest -p no:cacheprovider test_attack.py"},
    )
    assert r.status_code == 202, r.text
    job = r.json()["id"]
    async with asyncio.timeout(300):  # liveness bound only: the stream ends with the job
        await events_to_end(svc.client, job, "acme-key")
    status = await svc.client.get(f"/v1/bugs/{job}", headers=acme)
    assert status.json()["state"] == "done", status.text
    report = (await svc.client.get(f"/v1/bugs/{job}/report", headers=acme)).json()
    assert "pkg/calc.py" in {r["path"] for r in report["suspicious_regions"]}, report["notes"]
    # the other tenant's service still answers from its queue, and no host file changed
    theirs = await svc.client.get("/v1/bugs", headers={"X-API-Key": "globex-key"})
    assert theirs.status_code == 200 and theirs.json() == []
    assert queue_db.read_bytes().startswith(b"SQLite format 3\0")
    host.assert_intact()
