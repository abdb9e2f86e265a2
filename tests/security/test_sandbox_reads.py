"""A test in a hostile repository reads host files, other sandboxes, the service workspace.

Each hostile test prints what it could reach as ``LEAK:`` lines and what
was refused as ``DENIED:`` lines; the suite passes only when no ``LEAK``
appears and every probe was refused. A positive control in the same test
reads a file of its own copy, so a probe cannot "pass" because the hostile
test never ran.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from hostile import NEEDS_NAMESPACES, PY, host_has, hostile, open_sandbox, pytest_argv_for

from fixbugs.sandbox import Sandbox, interpreter_paths
from fixbugs.service import Workspace

pytestmark = NEEDS_NAMESPACES

PROBE = """
import os


def read(p):
    with open(p, "rb") as f:
        return f.read(200)


def test_attack():
    assert read("pkg/calc.py").startswith(b"def add")  # control: its own copy
    print("CONTROL-OK")
    for p in TARGETS:
        try:
            got = read(p)
        except OSError as exc:
            print("DENIED:", p, exc.strerror)
        else:
            print("LEAK:", p, got[:80])
    for d in DIRS:
        try:
            names = os.listdir(d)
        except OSError as exc:
            print("DENIED:", d, exc.strerror)
        else:
            extra = sorted(set(names) - set(ALLOWED.get(d, ())))
            print("LEAK:" if extra else "DENIED:", d, "lists", extra[:5])
"""


def probe_source(targets: list[str], dirs: list[str]) -> str:
    """The hostile test; a folder may list only the way to a path the sandbox was told to show."""
    shown = interpreter_paths(Path(PY))
    allowed = {
        d: sorted(
            {p.relative_to(d).parts[0] for p in shown if p.is_relative_to(d) and p != Path(d)}
        )
        for d in dirs
    }
    return f"TARGETS = {targets!r}\nDIRS = {dirs!r}\nALLOWED = {allowed!r}\n" + PROBE


async def run_probe(sb: Sandbox) -> str:
    result = await sb.run(pytest_argv_for("test_attack.py"), timeout_s=60)
    out = result.stdout + result.stderr
    assert "CONTROL-OK" in out and result.returncode == 0, out
    return out


async def test_host_secrets_are_not_readable(tmp_path: Path, sandboxes: list[Sandbox]) -> None:
    # a 0600 file inside a root-only 0700 directory, outside the repository
    vault = tmp_path / "vault"
    vault.mkdir(mode=0o700)
    (vault / "key").write_text("TOP-SECRET")
    os.chmod(vault / "key", 0o600)
    targets = ["/etc/shadow", str(vault / "key"), "/root/.bash_history", "/etc/gshadow"]
    dirs = ["/root", "/root/.ssh", "/home", str(vault)]
    repo = hostile(tmp_path, probe_source(targets, dirs))
    sb = open_sandbox(repo, tmp_path)
    sandboxes.append(sb)
    out = await run_probe(sb)
    assert "LEAK" not in out, out
    assert out.count("DENIED") == len(targets) + len(dirs), out
    assert "TOP-SECRET" not in out


async def test_other_sandboxes_and_the_service_workspace_are_not_reachable(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    victim_repo = tmp_path / "victim"
    (victim_repo / "pkg").mkdir(parents=True)
    (victim_repo / "pkg" / "secret.py").write_text("TOKEN = 'victim-secret'\n")
    victim = open_sandbox(victim_repo, tmp_path)
    sandboxes.append(victim)
    ws = Workspace(tmp_path / "service")
    job = ws.create("abc123")
    (job / "secret.txt").write_text("tenant-b-secret")
    (ws.root / "queue.db").write_text("queue rows")
    targets = [
        str(victim.root / "pkg" / "secret.py"),
        str(victim.baseline / "pkg" / "secret.py"),
        str(job / "secret.txt"),
        str(ws.root / "queue.db"),
    ]
    dirs = [str(victim.base), str(ws.root), "/var/tmp", "/dev/shm"]
    attacker = open_sandbox(hostile(tmp_path, probe_source(targets, dirs)), tmp_path)
    sandboxes.append(attacker)
    out = await run_probe(attacker)
    assert "LEAK" not in out, out
    assert "victim-secret" not in out and "tenant-b-secret" not in out
    assert out.count("DENIED") == len(targets) + len(dirs), out


async def test_private_tmp_is_empty_and_its_writes_stay_inside(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    marker = f"fixbugs-escape-{os.getpid()}"
    source = f"""
    import json, os

    def test_attack():
        print("TMP:" + json.dumps(sorted(os.listdir("/tmp"))))
        for d in ("/tmp", "/var/tmp", "/dev/shm"):
            with open(os.path.join(d, "{marker}"), "w") as f:
                f.write("x")
        print("CONTROL-OK")
    """
    sb = open_sandbox(hostile(tmp_path, source), tmp_path)
    sandboxes.append(sb)
    result = await sb.run(pytest_argv_for("test_attack.py"), timeout_s=60)
    assert "CONTROL-OK" in result.stdout, result.stdout + result.stderr
    listed = json.loads(result.stdout.split("TMP:", 1)[1].splitlines()[0])
    # only the first folder of each path mounted on purpose: its own copy (under
    # tmp_path) and the interpreter's folders when they live under /tmp (a checkout there)
    mounted = {
        q.parts[2]
        for q in (tmp_path, *sb.readonly_paths)
        if len(q.parts) > 2 and q.parts[1] == "tmp"
    }
    assert set(listed) == mounted, listed
    assert not any(host_has(Path(d, marker)) for d in ("/tmp", "/var/tmp", "/dev/shm"))


async def test_a_test_that_rewrites_its_copy_does_not_reach_later_stages(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    """The fix stage reads ``baseline`` and validation runs in forks: both pristine."""
    source = """
    def test_attack():
        with open("pkg/calc.py", "a") as f:
            f.write("# root:$6$stolen-shadow-line\\n")
    """
    sb = open_sandbox(hostile(tmp_path, source), tmp_path)
    sandboxes.append(sb)
    result = await sb.run(pytest_argv_for("test_attack.py"), timeout_s=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "stolen-shadow-line" in (sb.root / "pkg" / "calc.py").read_text()  # it did write
    assert "stolen" not in (sb.baseline / "pkg" / "calc.py").read_text()
    with sb.fork() as fork:
        assert "stolen" not in (fork.root / "pkg" / "calc.py").read_text()
        assert fork.diff() == ""


async def test_a_read_only_extra_above_the_sandboxes_is_not_shown(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    """A caller naming ``/tmp`` (or a parent of the sandboxes) must not expose the others."""
    victim_repo = tmp_path / "victim"
    victim_repo.mkdir()
    (victim_repo / "secret.txt").write_text("victim-secret")
    victim = open_sandbox(victim_repo, tmp_path)
    sandboxes.append(victim)
    source = probe_source([str(victim.root / "secret.txt")], [])
    attacker = Sandbox.create(
        hostile(tmp_path, source),
        base_dir=tmp_path,
        readonly_paths=(*interpreter_paths(Path(PY)), Path("/tmp"), tmp_path),
    )
    sandboxes.append(attacker)
    out = await run_probe(attacker)
    assert "LEAK" not in out and "victim-secret" not in out, out
