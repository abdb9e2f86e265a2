"""The pool: its BugsInPy builder's reading of a bug folder, a skip's reason, and
``fixbugs eval --pool``'s table over a two-case pool made here (no network, no fetch)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from evalkit import TEST_ADD, calc_case, pytest_report
from userpython import user_python

from fixbugs.eval.case import AgentOutput, Case
from fixbugs.eval.pool.bugsinpy import build_bugsinpy
from fixbugs.eval.pool.bugsinpy_bug import parse_bug
from fixbugs.eval.pool.casefiles import gold_of_patch
from fixbugs.eval.pool.evaluate import issue_mode, run_pool
from fixbugs.eval.pool.figures import PoolReport, pool_report
from fixbugs.eval.pool.pins import _failing_pin
from fixbugs.eval.reproduction import reproduction_kind
from fixbugs.localize import RankedFile
from fixbugs.repair.verdict import VerdictLevel

BUGGY = "a" * 40
FIXED = "b" * 40


def _bug_folder(root: Path) -> Path:
    bug = root / "projects" / "scrapy" / "bugs" / "7"
    bug.mkdir(parents=True)
    (bug / "bug.info").write_text(
        f'python_version="3.8.3"\nbuggy_commit_id="{BUGGY}"\nfixed_commit_id="{FIXED}"\n'
        'test_file="tests/test_a.py;tests/test_b.py"\n'
    )
    (bug / "run_test.sh").write_text(
        "python -m unittest -q tests.test_a.TestA._helper\n"
        "python -m unittest -q tests.test_a.TestA.test_one\n"
        "python -m unittest -q tests.test_b.TestB.test_two\n"
        "python -m unittest -q tests.test_b.TestC\n"  # a whole class
    )
    reqs = "Scrapy==2.1.0\n-e git+https://example.invalid/scrapy@abc#egg=scrapy\nsix==1.15.0\n"
    (bug / "requirements.txt").write_bytes(reqs.encode("utf-16"))  # BOM and all
    (bug / "bug_patch.txt").write_text(
        "diff --git a/scrapy/x.py b/scrapy/x.py\n--- a/scrapy/x.py\n+++ b/scrapy/x.py\n"
        "@@ -3,3 +3,4 @@\n a\n b\n+c\n d\n"
    )
    return bug


def test_a_bugsinpy_folder_reads_as_pytest_ids_plain_pins_and_gold_hunks(tmp_path: Path):
    bug = parse_bug(_bug_folder(tmp_path), "scrapy")
    assert bug.case_id == "scrapy-7"
    assert (bug.buggy_commit, bug.fixed_commit) == (BUGGY, FIXED)
    assert bug.test_files == ("tests/test_a.py", "tests/test_b.py")
    # unittest names become pytest ids; a helper that is no test is no failing test
    assert bug.failing_tests == (
        "tests/test_a.py::TestA::test_one",
        "tests/test_b.py::TestB::test_two",
        "tests/test_b.py::TestC",
    )
    assert bug.pins == ("six==1.15.0",)  # the project's own pin and its editable line go
    files, hunks = gold_of_patch(bug.patch)
    assert files == ("scrapy/x.py",)
    assert [(h.file, h.start, h.end) for h in hunks] == [("scrapy/x.py", 4, 5)]  # around it


def test_the_pin_pip_stopped_at_is_the_one_dropped():
    pins = ["Flask==1.1.2", "pywin32==227", "SOAPpy==0.12.22", "six==1.15.0"]
    no_match = (
        "Collecting Flask==1.1.2\nERROR: Could not find a version that satisfies the requirement"
        " pywin32==227 (from versions: none)\nERROR: No matching distribution found for "
        "pywin32==227\n"
    )
    assert _failing_pin(no_match, pins) == "pywin32==227"
    build = (
        "Collecting Flask==1.1.2\nCollecting SOAPpy==0.12.22\n  Downloading SOAPpy-0.12.22.zip\n"
        "  error: subprocess-exited-with-error\n  × python setup.py egg_info did not run\n"
    )
    assert _failing_pin(build, pins) == "SOAPpy==0.12.22"  # the last one collected
    assert _failing_pin("ERROR: something else\n", pins) is None


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_a_project_without_its_mirror_is_skipped_saying_what_to_fetch(tmp_path: Path):
    work = tmp_path / "work"
    bug = _bug_folder(work)
    project = bug.parents[1]
    (project / "project.info").write_text('github_url="https://github.com/tiangolo/fastapi"\n')
    project.rename(work / "projects" / "fastapi")
    _git("init", "-q", cwd=work)
    _git("add", ".", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "bugs", cwd=work)
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    _git(
        "clone", "-q", "--bare", str(work), str(mirrors / "soarsmu+BugsInPy" / "repo"), cwd=tmp_path
    )
    (b,) = build_bugsinpy(tmp_path / "pool", mirrors, projects=("fastapi",))
    assert b.case_id == "fastapi-7" and not b.built
    assert b.skipped is not None and "fetch github:fastapi/fastapi first" in b.skipped


def _mirror(work: Path, files: dict[str, str], bare: Path) -> str:
    """A bare clone at ``bare`` of one commit of ``files``; its commit id."""
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    _git("init", "-q", cwd=work)
    _git("add", ".", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c", cwd=work)
    _git("clone", "-q", "--bare", str(work), str(bare), cwd=work.parent)
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, capture_output=True, text=True)
    return done.stdout.strip()


def test_a_built_case_gains_its_issue_text_and_the_tree_as_it_was(tmp_path: Path):
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    tree = {"app/core.py": "x = 1\n", "tests/test_core.py": "def test_x():\n    pass\n"}
    # BugsInPy still names the old repository; the mirror has the new name
    commit = _mirror(tmp_path / "project", tree, mirrors / "fastapi+fastapi" / "repo")
    work = tmp_path / "bip"
    bug = _bug_folder(work)
    info = (bug / "bug.info").read_text().replace(BUGGY, commit)
    (bug / "bug.info").write_text(info)
    (bug.parents[1] / "project.info").write_text('github_url="https://github.com/tiangolo/fastapi"')
    bug.parents[1].rename(work / "projects" / "fastapi")
    _mirror(work, {}, mirrors / "soarsmu+BugsInPy" / "repo")
    pool = tmp_path / "pool"
    built = pool / "fastapi-7"
    built.mkdir(parents=True)
    (built / "case.json").write_text(json.dumps({"id": "fastapi-7", "has_issue": False}))
    (built / "gold.json").write_text("{}")
    issues = tmp_path / "issues"
    issues.mkdir()
    (issues / "fastapi-7.md").write_text(ISSUE)
    (b,) = build_bugsinpy(pool, mirrors, projects=("fastapi",), issues=issues)
    assert b.built and b.has_issue and b.case_dir == built  # not rebuilt: only the issue added
    assert (built / "issue.md").read_text() == ISSUE
    with tarfile.open(built / "repo-issue.tar.gz") as tar:
        assert sorted(tar.getnames()) == sorted(tree)  # files at the top, tests of then
    assert json.loads((built / "case.json").read_text())["has_issue"] is True


def test_reproduction_kinds():
    own = {"calc"}
    missing = (
        "____ test_a ____\n    import x\nE   ModuleNotFoundError: No module named 'requests'\n"
    )
    assert reproduction_kind("confirmed", missing, own) == "environment"
    mine = missing.replace("'requests'", "'calc.ops'")
    assert reproduction_kind("confirmed", mine, own) == "genuine"  # the code's own import
    dist = "pkg_resources.DistributionNotFound: The 'calc' distribution was not found\n"
    assert reproduction_kind("failed", dist, own) == "environment"
    assert reproduction_kind("could_not_run", "", own) == "environment"
    assert reproduction_kind("none", "", own) == "none"


# -- the pool evaluation over two cases made here ---------------------------------------

OPS = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
TESTS = (
    "from calc.ops import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
    "def test_sub():\n    assert sub(3, 2) == 1\n"
)
FILES = {"calc/__init__.py": "", "calc/ops.py": OPS, "tests/test_calc.py": TESTS}
RIGHT = (
    "--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
    "-    return a - b\n+    return a + b\n"
)
# test_add passes with it, test_sub (pass-to-pass) breaks: the run's own tests saw only test_add
WRONG = (
    "--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -1,6 +1,6 @@\n def add(a, b):\n-    return a - b\n"
    "+    return a + b\n \n \n def sub(a, b):\n-    return a - b\n+    return a + b\n"
)
ISSUE = "# add() subtracts\n\nadd(1, 2) gives -1 in my shop's till.\n"


def _pool(root: Path) -> Path:
    for name in ("calc-1", "calc-2"):
        calc_case(
            root,
            FILES,
            pytest_report(5),
            name=name,
            pass_to_pass=["tests/test_calc.py::test_sub"],
            patch=RIGHT,
        )
    (root / "calc-1" / "issue.md").write_text(ISSUE)
    with tarfile.open(root / "calc-1" / "repo-issue.tar.gz", "w:gz") as tar:  # no tests then
        for path in ("calc/__init__.py", "calc/ops.py"):
            data = FILES[path].encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return root


def _agent(calls: list[str]):
    async def agent(case: Case, tree: Path, python_bin: Path) -> AgentOutput:
        issue = not case.test_command
        calls.append(f"{case.id}.{'issue' if issue else 'test'}")
        if issue:  # the issue text and the tree as it was: no test of the fix yet
            assert case.report == ISSUE and not (tree / "tests").exists()
            return AgentOutput((RankedFile("calc/ops.py", 1.0, ("issue",)),))
        assert TEST_ADD in case.test_command and (tree / "tests" / "test_calc.py").is_file()
        if case.id == "calc-1":
            ranked = (RankedFile("calc/ops.py", 1.0, ("x",)),)
            return AgentOutput(
                ranked,
                RIGHT,
                True,
                root_cause=("calc/ops.py", 2, 2),
                verdict=VerdictLevel.VALIDATED,
                reproduction_kind="genuine",
            )
        ranked = (
            RankedFile("tests/test_calc.py", 1.0, ("x",)),
            RankedFile("calc/ops.py", 0.5, ("y",)),
        )
        return AgentOutput(
            ranked, WRONG, False, verdict=VerdictLevel.VALIDATED, reproduction_kind="environment"
        )

    return agent


def _figures(report: PoolReport, mode: str) -> dict[str, tuple[int, int | None, int | None]]:
    (m,) = [t for t in report.table if t.mode == mode]
    return {f.name: (f.agent, f.bm25, f.previous) for f in m.figures}


@pytest.mark.needs_root
async def test_the_pool_table_counts_fixes_the_real_tests_accept_beside_validated(tmp_path: Path):
    pool = _pool(tmp_path / "pool")
    results = pool / "results"
    env = user_python().parent
    calls: list[str] = []
    rows = await run_pool(
        pool, agent=_agent(calls), results=results, jobs=2, python_env=lambda p, r: env
    )
    assert sorted(calls) == ["calc-1.issue", "calc-1.test", "calc-2.test"]
    report = pool_report(pool, rows)
    test = _figures(report, "test")
    assert test["file top-1"] == (1, 2, None)  # BM25 reads "add" in the report: calc/ops.py
    assert test["file top-3"] == (2, 2, None)
    assert test["region"] == (1, None, None)
    assert test["reproduction: genuine"][0] == 1 and test["reproduction: environment"][0] == 1
    assert test["validated (the run's own verdict)"][0] == 2
    assert test["accepted by the real tests (any verdict)"][0] == 1  # 1 of 2
    assert test["validated and accepted by the real tests"][0] == 1
    assert test["validated, rejected by the real tests"][0] == 1  # calc-2 broke test_sub
    (wrong,) = [r for r in rows if r.case_id == "calc-2"]
    assert wrong.detail == "1 pass-to-pass tests broke"
    # each row keeps where its time went, through the resume below too
    assert {"env_setup", "agent_total"} <= set(wrong.stage_s), wrong.stage_s
    issue = _figures(report, "issue")
    assert issue["file top-1"][0] == 1 and issue["accepted by the real tests (any verdict)"][0] == 0
    assert issue["reproduction: none"][0] == 1

    # a rerun resumes: nothing runs again, the same rows come back
    again = await run_pool(pool, agent=_agent(calls), results=results, python_env=lambda p, r: env)
    assert len(calls) == 3 and sorted(again, key=str) == sorted(rows, key=str)

    # --fresh with the right fix for both, calc-1's only "passes tests": the real tests accept
    # both, one of them validated; the figure moves, and says which case moved it
    async def fixed(case: Case, tree: Path, python_bin: Path) -> AgentOutput:
        out = await _agent(calls)(case, tree, python_bin)
        level = VerdictLevel.VALIDATED if case.id == "calc-2" else VerdictLevel.PASSES_TESTS
        return AgentOutput(
            out.ranked,
            RIGHT if case.test_command else None,
            verdict=level if case.test_command else VerdictLevel.NO_FIX,
        )

    rows2 = await run_pool(
        pool, agent=fixed, results=results, fresh=True, python_env=lambda p, r: env
    )
    later = pool_report(pool, rows2, report, results / "last-run.json")
    figures = _figures(later, "test")
    assert figures["accepted by the real tests (any verdict)"] == (2, None, 1)
    assert figures["validated and accepted by the real tests"] == (1, None, 1)
    assert figures["validated (the run's own verdict)"] == (1, None, 2)
    moved = {(c.case_id, c.mode): c.what for c in later.changed}
    assert "accepted False → True" in moved[("calc-2", "test")]
    (one,) = [r for r in rows2 if (r.case_id, r.mode) == ("calc-1", "test")]
    assert (one.verdict, one.patch) == ("passes_tests", RIGHT)


@pytest.mark.needs_root
async def test_one_mode_runs_alone_and_its_table_holds_only_it(tmp_path: Path):
    pool = _pool(tmp_path / "pool")
    env = user_python().parent
    calls: list[str] = []
    rows = await run_pool(
        pool,
        agent=_agent(calls),
        results=pool / "results",
        python_env=lambda p, r: env,
        modes=("issue",),
    )
    assert calls == ["calc-1.issue"]
    assert [(r.case_id, r.mode) for r in rows] == [("calc-1", "issue")]
    assert [t.mode for t in pool_report(pool, rows).table] == ["issue"]


def test_a_cases_issue_mode_is_its_issue_text_alone_on_the_tree_of_then(tmp_path: Path):
    from fixbugs.eval.run import load_cases

    pool = _pool(tmp_path / "pool")
    cases = {c.id: c for c in load_cases(pool)}
    got = issue_mode(cases["calc-1"])
    assert got is not None
    assert (got.report, got.test_command, got.archive) == (ISSUE, "", "repo-issue.tar.gz")
    assert got.report_file == pool / "calc-1" / "issue.md"
    assert issue_mode(cases["calc-2"]) is None  # no issue text: no issue mode


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--no-test",), "no --reports or --no-test with it"),
        (("--case", "calc-2"), "no case here has an issue text"),
        ((), None),
    ],
)
def test_eval_mode_issue_on_a_case_folder_says_what_is_wrong_in_one_line(
    tmp_path: Path, extra: tuple[str, ...], said: str | None
):
    pool = _pool(tmp_path / "pool")
    argv = ["eval", "--cases", str(pool), "--mode", "issue", "--no-model", *extra]
    if said is None:  # a bad mode, whatever the cases
        argv[argv.index("issue")] = "issues"
        said = "--mode 'issues': give test or issue"
    done = subprocess.run(
        [sys.executable, "-c", "from fixbugs.cli import main; main()", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_an_eval_of_a_built_pool_takes_the_builders_venvs_and_makes_none(tmp_path: Path):
    """Some frozen pin lists install only as the builder installed them (``--no-deps``):
    an eval of a built pool's cases uses its venvs, never one of its own from the list."""
    from fixbugs.pyenv.testenv import ensure_python_env

    pool = _pool(tmp_path / "pool")
    ensure_python_env("3", [], (), cache_dir=pool / "venvs")  # what the builder made
    picked = tmp_path / "picked"  # a folder of links to some of its cases
    picked.mkdir()
    (picked / "calc-1").symlink_to(pool / "calc-1")
    for n, cases in enumerate((pool, picked)):
        cache, out = tmp_path / f"cache{n}", tmp_path / f"eval{n}.json"
        argv = ["eval", "--cases", str(cases), "--mode", "issue", "--localize-only", "--no-model"]
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "from fixbugs.cli import main; main()",
                *argv,
                "--json",
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "XDG_CACHE_HOME": str(cache)},
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert [c["id"] for c in json.loads(out.read_text())["cases"]] == ["calc-1"]
        made = cache / "fixbugs" / "envs"
        assert not made.exists() or not any(made.iterdir())  # no venv with coverage of its own
