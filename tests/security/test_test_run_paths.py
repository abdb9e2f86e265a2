"""What a test run writes is data, never a path to follow (issue 21, item 3).

The attack: the repository ships a ``coverage`` package of its own, so
``python -m coverage`` in the sandbox runs it, and the coverage report it
writes names host files: an absolute path, ``../`` forms of it, links inside
the repository to it, ``/proc/self/root/…`` and ``/proc/1/cwd/…``. Before,
each became a suspicious file, and the fix stage read it from the host as
root and turned its contents into candidates, events and report text. Here
each test builds that repository and a host file holding a unique secret,
and the secret must show up nowhere: only the repository's own files are
scored, read and shown.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from hostile import (
    COVERAGE_DATA_CLASS,
    NEEDS_NAMESPACES,
    PY,
    open_sandbox,
    plain_context,
    write_repo,
)

from fixbugs.inputs import BugInputs, load_inputs
from fixbugs.localize.sbfl import run_sbfl
from fixbugs.run.agent import run_from_paths
from fixbugs.run.context import RunContext
from fixbugs.run.progress import collecting_sink
from fixbugs.run.record import BugRun, Reproduction, Sbfl
from fixbugs.sandbox import Sandbox
from fixbugs.sandbox.reported import CopyPaths, Drop, read_baseline_text
from fixbugs.stages.fix import propose_fixes

TESTS = """
from pkg.calc import add


def test_ok():
    assert add(0, 0) == 0


def test_bad():
    assert add(2, 2) == 4
"""

# ``python -m coverage run … -m pytest ARGS`` runs pytest for real (so the
# outcomes are real); the package's ``CoverageData``, which FixBugs' reader
# imports, names (with the failing test) each way of naming the host files
# from the folder it runs in, and the repository's calc.py (relative and absolute).
SHADOW_RUN = """
import os, sys

argv = sys.argv[1:]
if argv[0] == "run":
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import pytest

    sys.exit(pytest.main(argv[argv.index("pytest") + 1 :]))
"""
SHADOW_DATA = """
import os

PY, KEYS = {py!r}, {keys!r}
CONTEXTS = {{"1": ["test_attack.test_bad"], "2": ["test_attack.test_bad", "test_attack.test_ok"]}}


def names():
    copy = os.getcwd()
    up = os.path.relpath(PY, copy)
    return [
        PY, KEYS, up, "pkg/" + os.path.relpath(PY, copy + "/pkg"), copy + "/../" + up,
        "pkg/leak.py", "hostdir/leak.py",  # links in the repository
        "/proc/self/root" + PY, "/proc/1/cwd" + PY, "/proc/self/cwd/../" + up,
        "pkg/calc.py", copy + "/pkg/calc.py",
    ]
"""
DROPPED = 10  # of the shadow's names, all but the two of calc.py


class Host:
    """A host file of secrets outside the repository, and the paths that name it."""

    def __init__(self, tmp_path: Path) -> None:
        self.secret = f"HOSTSECRET{uuid.uuid4().hex}"
        self.dir = tmp_path / "host-only"
        self.dir.mkdir()
        self.py = self.dir / "leak.py"
        # a repair template drops a word of a literal, and says which
        self.py.write_text(f'TOKEN = "api key {self.secret}"\nTOKEN = TOKEN.strip()\n')
        # like the service's --api-key-file
        self.keys = self.dir / "keys.json"
        self.keys.write_text(json.dumps({"keys": {self.secret: "acme"}}))

    def names(self, copy_root: Path) -> list[str]:
        """Ways a test run can name the host files from ``copy_root``, and calc.py."""
        up = os.path.relpath(self.py, copy_root)
        return [
            str(self.py),
            str(self.keys),
            up,
            f"{copy_root}/../{up}",
            "pkg/leak.py",
            "hostdir/leak.py",
            f"/proc/1/cwd{self.py}",
            "pkg/calc.py",
        ]

    def leaked(self, text: str) -> bool:
        return self.secret in text


def hostile_repo(tmp_path: Path, host: Host, tests: str = TESTS) -> Path:
    repo = write_repo(
        tmp_path / "hostile",
        {
            "pkg/__init__.py": "",
            "pkg/calc.py": "def add(a, b):\n    return a - b\n",
            "test_attack.py": tests,
            "coverage/__init__.py": SHADOW_DATA.format(py=str(host.py), keys=str(host.keys))
            + COVERAGE_DATA_CLASS,
            "coverage/__main__.py": SHADOW_RUN,
        },
    )
    (repo / "pkg" / "leak.py").symlink_to(host.py)
    (repo / "hostdir").symlink_to(host.dir)
    return repo


def listing(repo: Path) -> list[str]:
    return [str(p.relative_to(repo)) for p in repo.rglob("*.py") if not p.is_symlink()]


# --- the mapping itself: no sandbox needed -----------------------------------


@pytest.mark.parametrize(
    ("reported", "expected"),
    [
        ("pkg/calc.py", "pkg/calc.py"),
        ("./pkg//calc.py", "pkg/calc.py"),
        ("{root}/pkg/calc.py", "pkg/calc.py"),
        ("{host}", Drop.OUTSIDE),
        ("/etc/shadow", Drop.OUTSIDE),
        ("{root}/../{up}", Drop.PARENT),
        ("{up}", Drop.PARENT),
        ("pkg/../pkg/calc.py", Drop.PARENT),
        ("/proc/self/root{host}", Drop.PROC),
        ("/proc/1/cwd/pkg/calc.py", Drop.PROC),
        ("pkg/leak.py", Drop.NOT_REGULAR),
        ("hostdir/leak.py", Drop.NOT_REGULAR),
        ("pkg", Drop.NOT_REGULAR),
        ("pkg/missing.py", Drop.NOT_REGULAR),
        ("", Drop.EMPTY),
        ("pkg/calc.py\0", Drop.EMPTY),
    ],
)
def test_a_reported_path_maps_to_a_baseline_file_or_is_dropped(
    tmp_path: Path, reported: str, expected: str | Drop
) -> None:
    host = Host(tmp_path)
    baseline = hostile_repo(tmp_path, host)
    copy = tmp_path / "copy"  # where the run saw the tree
    raw = reported.format(root=copy, host=host.py, up=os.path.relpath(host.py, copy))
    assert CopyPaths.of(baseline, seen_at=(copy,)).check(raw) == expected


def test_a_file_outside_the_listing_is_dropped(tmp_path: Path) -> None:
    baseline = hostile_repo(tmp_path, Host(tmp_path))
    paths = CopyPaths.of(baseline, listed=["pkg/calc.py"])
    assert paths.check("pkg/calc.py") == "pkg/calc.py"
    assert paths.check("pkg/__init__.py") == Drop.UNLISTED


def test_the_drop_note_counts_reasons_and_shows_no_raw_bytes(tmp_path: Path) -> None:
    baseline = hostile_repo(tmp_path, Host(tmp_path))
    kept = CopyPaths.of(baseline).keep(["/etc/\x1b]52;c;evil\x07x", "../x", "pkg/calc.py"])
    assert kept.kept == {"pkg/calc.py": "pkg/calc.py"}
    note = kept.note("the coverage report")
    assert note is not None and "\x1b" not in note and "\x07" not in note
    assert "2 path(s)" in note and Drop.OUTSIDE.value in note and Drop.PARENT.value in note


def test_the_baseline_reader_reads_no_link(tmp_path: Path) -> None:
    host = Host(tmp_path)
    baseline = hostile_repo(tmp_path, host)
    assert read_baseline_text(baseline, "pkg/calc.py") == "def add(a, b):\n    return a - b\n"
    for name in ("pkg/leak.py", "hostdir/leak.py", str(host.py), f"/proc/self/root{host.py}"):
        assert read_baseline_text(baseline, name) is None


# --- SBFL through a real sandbox ---------------------------------------------


@NEEDS_NAMESPACES
async def test_a_shadowed_coverage_scores_only_repository_files(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    host = Host(tmp_path)
    repo = hostile_repo(tmp_path, host)
    sb = open_sandbox(repo, tmp_path)
    sandboxes.append(sb)
    async with asyncio.timeout(120):  # liveness bound only
        result = await run_sbfl(
            sb,
            Path(PY),
            ["test_attack.py"],
            baseline=sb.baseline,
            listed=listing(repo),
        )
    assert set(result.file_scores) == {"pkg/calc.py"}, result.notes
    assert set(result.line_scores) == {"pkg/calc.py"}
    (note,) = result.notes
    assert note.startswith(f"the coverage report named {DROPPED} path(s)"), note
    assert not host.leaked(repr(result))


# --- the fix stage: a reported path is never read from the host -------------


def fix_context(
    tmp_path: Path, host: Host, sandboxes: list[Sandbox]
) -> tuple[BugInputs, RunContext, Sandbox]:
    repo = hostile_repo(tmp_path, host)
    (tmp_path / "bug.md").write_text("# add is wrong\n\nadd(2, 2) gives 0, not 4\n")
    sink, _ = collecting_sink()
    inputs = load_inputs(tmp_path / "bug.md", repo)
    ctx = plain_context(inputs.repo, sink)
    sandbox = open_sandbox(repo, tmp_path)
    sandboxes.append(sandbox)
    return inputs, ctx, sandbox


async def test_the_fix_stage_reads_no_path_a_test_run_named(
    tmp_path: Path, sandboxes: list[Sandbox]
) -> None:
    """As if SBFL and pytest's output had named host files: they are not read."""
    host = Host(tmp_path)
    inputs, ctx, sandbox = fix_context(tmp_path, host, sandboxes)
    suspicious = {name: ((1, 3, 1.0),) for name in host.names(sandbox.root)}
    # a test id from a hostile pytest -v output becomes the reproduction command
    cmd = f"python -m pytest -p no:cacheprovider {host.py}::test_x pkg/leak.py::test_y"
    prior = BugRun(
        started=0.0,
        reproduction=Reproduction(cmd, "discovered", "confirmed", "fails"),
        sbfl=Sbfl(suspicious=suspicious),
    )
    candidates = await propose_fixes(inputs, prior, ctx, baseline=sandbox.baseline)
    shown = [repr(c) for c in candidates]
    shown += [repr(e) for e in ctx.journal.events] + ctx.journal.notes
    assert not any(host.leaked(s) for s in shown)
    assert candidates, "the repository's own file still gets candidates"
    assert {c.path for c in candidates} == {"pkg/calc.py"}


# --- a test id in pytest's output names a listed file, or none -------------

# ``python -m pytest`` in the copy runs this: it reports a failing test in the
# host file, with the report's words, as pytest -v would
PYTEST_SHADOW = """
print({test_id!r} + " FAILED")
print("=" * 20 + " FAILURES " + "=" * 20)
print("_" * 10 + " test_x " + "_" * 10)
print("E   AssertionError: add(2, 2) gives 0")
print("=" * 10 + " 1 failed in 0.01s " + "=" * 10)
raise SystemExit(1)
"""


@NEEDS_NAMESPACES
async def test_a_discovered_test_is_one_of_the_repository(tmp_path: Path) -> None:
    host = Host(tmp_path)
    repo = hostile_repo(tmp_path, host)
    write_repo(
        repo,
        {
            "pytest/__init__.py": "",
            "pytest/__main__.py": PYTEST_SHADOW.format(test_id=f"{host.py}::test_x"),
        },
    )
    (tmp_path / "bug.md").write_text("# add is wrong\n\n`add(2, 2)` gives 0, not 4.\n")
    report = await run_from_paths(
        report=tmp_path / "bug.md", repo=repo, use_model=False, python=Path(PY)
    )
    rep = report.to_dict()["reproduction"]
    assert str(host.py) not in (rep["command"] or ""), rep
    assert rep["origin"] != "discovered" and not rep["confirmed"]
    assert not host.leaked(report.to_json() + report.markdown())


# --- the whole CLI run ---------------------------------------------------------


def has_coverage() -> bool:
    done = subprocess.run([PY, "-c", "import coverage"], capture_output=True, check=False)
    return done.returncode == 0


@NEEDS_NAMESPACES
@pytest.mark.skipif(not has_coverage(), reason="needs coverage.py in this interpreter")
def test_a_whole_run_shows_no_host_file(tmp_path: Path) -> None:
    host = Host(tmp_path)
    # no candidate can pass this test: every one is tried, and each rejection
    # is shown (what it did, on which file) on stdout and in the events
    repo = hostile_repo(tmp_path, host, tests=TESTS.replace("== 4", "== 5"))
    report = tmp_path / "bug.md"
    report.write_text("# add is wrong\n\n`add(2, 2)` gives 0, not 4.\n")
    out_json, out_md = tmp_path / "out.json", tmp_path / "out.md"
    argv = [
        sys.executable, "-c", "from fixbugs.cli import main; main()", "run",
        "--report", str(report), "--repo", str(repo), "--no-model", "--python", PY,
        "--test", "python -m pytest -p no:cacheprovider test_attack.py",
        "--json", str(out_json), "--markdown", str(out_md),
        "--repair-budget", "60", "--repair-candidates", "20",
    ]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    texts = [done.stdout, done.stderr, out_json.read_text(), out_md.read_text()]
    assert not any(host.leaked(t) for t in texts)
    data = json.loads(texts[2])
    dropped = f"the coverage report named {DROPPED} path(s)"
    assert any(n.startswith(dropped) for n in data["notes"]), data["notes"]
    listed = set(listing(repo))
    assert {f["path"] for f in data["ranked_files"]} <= listed
    assert {r["path"] for r in data["suspicious_regions"]} <= listed
    assert data["ranked_files"][0]["path"] == "pkg/calc.py"
