"""The SWE-bench pool source: a PR's diff split into tests and gold, the tests it
changes named, the cases kept or skipped on what their tests do.

Everything runs on a small git repository made here, shaped like a merged
GitHub PR (the base, master moving on, the PR branch, a ``--no-ff`` merge);
no fetch, no sympy, no network. The end-to-end test runs pytest with this
venv's interpreter in an unconfined workspace.
"""

from __future__ import annotations

import functools
import json
import subprocess
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from userpython import user_python

from fixbugs.diffs import added_lines
from fixbugs.errors import InputError
from fixbugs.eval.pool.outcome import PoolBuild
from fixbugs.eval.pool.prdiff import changed_tests, pr_diff, split_pr
from fixbugs.eval.pool.select import select_tests
from fixbugs.eval.pool.swebench import build_sympy
from fixbugs.eval.pool.testruns import ModuleRun
from fixbugs.pyenv.testoutput import collect_error
from fixbugs.sandbox.hosttools import git_env
from fixbugs.sandbox.testing import PlainWorkspace

_BUGGY = "def double(x):\n    return x + x + 1\n\n\ndef triple(x):\n    return 3 * x\n"
_FIXED = "def double(x):\n    return 2 * x\n\n\ndef triple(x):\n    return 3 * x\n"
_TESTS = """from pkg.mod import double, triple


def test_triple():
    assert triple(2) == 6


def test_double_exists():
    assert double(1) is not None


class TestMore:
    def test_kept(self):
        assert triple(0) == 0
"""
_PR_TESTS = """from pkg.mod import double, triple


def test_triple():
    assert triple(2) == 6


def test_double_exists():
    assert double(2) == 4


class TestMore:
    def test_kept(self):
        assert triple(0) == 0

    def test_new(self):
        assert double(3) == 6
"""


def _git(repo: Path, *args: str) -> str:
    env = git_env(
        {
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
        }
    )
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)


def _merged_pr(repo: Path, pr_files: dict[str, str]) -> tuple[str, str]:
    """A repository where a PR branch that writes ``pr_files`` leaves master, master
    moves on to ``base`` (SWE-bench's base: master when the PR was opened) and then
    merges the branch: (base, merge)."""
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "master")
    _write(
        repo,
        {
            "setup.py": "",
            "pkg/__init__.py": "",
            "pkg/mod.py": _BUGGY,
            "pkg/tests/__init__.py": "",
            "pkg/tests/test_mod.py": _TESTS,
        },
    )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "start")
    _git(repo, "checkout", "-q", "-b", "pr")
    _write(repo, pr_files)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "the fix")
    _git(repo, "checkout", "-q", "master")
    _write(repo, {"other.py": "x = 1\n"})  # master moves on: not the PR's change
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "elsewhere")
    base = _git(repo, "rev-parse", "HEAD")
    _git(repo, "merge", "-q", "--no-ff", "-m", "Merge pull request #7", "pr")
    return base, _git(repo, "rev-parse", "HEAD")


_FIX_PR = {"pkg/mod.py": _FIXED, "pkg/tests/test_mod.py": _PR_TESTS, "doc/notes.rst": "fixed\n"}


def test_the_prs_diff_splits_into_tests_gold_and_the_rest(tmp_path: Path):
    base, merge = _merged_pr(tmp_path / "r", _FIX_PR)
    pr = split_pr(pr_diff(tmp_path / "r" / ".git", base, merge), ["pkg/mod.py"])
    assert pr.test_files == ("pkg/tests/test_mod.py",)
    assert [g.path for g in pr.gold] == ["pkg/mod.py"]
    assert pr.dropped == ("doc/notes.rst",)
    assert "other.py" not in pr.test_patch + pr.gold_patch  # master's change is not the PR's
    assert "+    return 2 * x" in pr.gold_patch


def test_the_test_diff_names_the_test_functions_it_adds_or_changes(tmp_path: Path):
    base, merge = _merged_pr(tmp_path / "r", _FIX_PR)
    (part,) = split_pr(pr_diff(tmp_path / "r" / ".git", base, merge), ["pkg/mod.py"]).tests
    ids = changed_tests(part.path, _PR_TESTS, added_lines(part.text))
    assert ids == [
        "pkg/tests/test_mod.py::test_double_exists",
        "pkg/tests/test_mod.py::TestMore::test_new",
    ]


def test_a_removed_line_and_a_decorator_count_as_changes():
    source = (
        "import pytest\n\n\n@pytest.mark.slow\ndef test_a():\n    x = 1\n"
        "\n\ndef test_b():\n    pass\n"
    )
    removal = "@@ -5,3 +5,2 @@\n def test_a():\n-    y = 2\n     x = 1\n"
    assert changed_tests("t.py", source, added_lines(removal)) == ["t.py::test_a"]
    decorator = "@@ -3,0 +4,1 @@\n+@pytest.mark.slow\n"
    assert changed_tests("t.py", source, added_lines(decorator)) == ["t.py::test_a"]


def _run(module: str, outcomes: dict[str, str], error: str | None = None) -> ModuleRun:
    return ModuleRun(module, outcomes, error, False, 1.0)  # type: ignore[arg-type]


def test_tests_that_already_pass_at_base_make_no_case():
    before = [_run("t.py", {"t.py::test_a": "passed", "t.py::test_b": "passed"})]
    after = [_run("t.py", {"t.py::test_a": "passed", "t.py::test_b": "passed"})]
    chosen = select_tests(["t.py::test_a"], before, after)
    assert chosen.reason == "PR's tests pass at base"
    assert chosen.failing == ()


def test_a_module_that_imports_only_with_the_fix_fails_its_candidates():
    before = [_run("t.py", {}, "ImportError: cannot import name 'new'")]
    after = [_run("t.py", {"t.py::test_a": "passed", "t.py::test_b": "passed"})]
    chosen = select_tests(["t.py::test_a"], before, after)
    assert chosen.failing == ("t.py::test_a",)
    assert chosen.pass_to_pass == ()  # nothing passed at base


def test_a_collection_error_with_the_fix_is_a_skip_reason():
    after = [_run("t.py", {}, "ModuleNotFoundError: No module named 'numpy'")]
    chosen = select_tests(["t.py::test_a"], [_run("t.py", {})], after)
    assert chosen.reason == (
        "collection error at base + gold patch in t.py: "
        "ModuleNotFoundError: No module named 'numpy'"
    )


def test_collect_error_reads_pytests_first_collection_error():
    out = (
        "==== ERRORS ====\n"
        "____ ERROR collecting sympy/core/tests/test_x.py ____\n"
        "sympy/core/tests/test_x.py:1: in <module>\n"
        "E   ImportError: cannot import name 'f'\n"
    )
    assert collect_error(out) == "ImportError: cannot import name 'f'"
    assert collect_error("1 passed in 0.1s\n") is None


def _mirrors(tmp_path: Path, instances: list[tuple[str, str, str]]) -> tuple[Path, Path]:
    """Bare mirrors as the fetch tool lays them out, and a manifest of ``instances``
    (id, base, merge) of the repository ``r``."""
    mirrors = tmp_path / "mirrors"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(tmp_path / "r"), str(mirrors / "sympy+sympy/repo")],
        check=True,
        env=git_env(),
    )
    texts = tmp_path / "texts"
    texts.mkdir()
    _git(texts, "init", "-q", "-b", "main")
    _write(texts, {"swe_bench_verified.json": json.dumps(["double is off by one\n", "other"])})
    _git(texts, "add", "-A")
    _git(texts, "commit", "-q", "-m", "texts")
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--bare",
            str(texts),
            str(mirrors / "sarahpannn+flexflow-serve/repo"),
        ],
        check=True,
        env=git_env(),
    )
    manifest = tmp_path / "manifest.json"
    entries = [
        {
            "id": cid,
            "idx": 0,
            "repo": "sympy/sympy",
            "base_commit": base,
            "merge_commit": merge,
            "pr": 7,
            "gold_files": ["pkg/mod.py"],
            "hunks": [{"file": "pkg/mod.py", "start": 2, "end": 2}],
        }
        for cid, base, merge in instances
    ]
    manifest.write_text(json.dumps(entries))
    return mirrors, manifest


def _builder(
    tmp_path: Path, mirrors: Path, manifest: Path, commands: list[str], shown: list[PoolBuild]
) -> Callable[[], list[PoolBuild]]:
    """build_sympy on this test's mirrors, its commands run plainly and listed, its cases shown."""
    return functools.partial(
        build_sympy,
        tmp_path / "out",
        mirrors,
        manifest=manifest,
        python_bin=user_python().parent,
        workspace=functools.partial(PlainWorkspace.create, commands=commands),
        on_case=shown.append,
    )


def test_a_case_is_built_verified_and_not_rebuilt(tmp_path: Path):
    base, merge = _merged_pr(tmp_path / "r", _FIX_PR)
    mirrors, manifest = _mirrors(tmp_path, [("sympy__sympy-1", base, merge)])
    commands: list[str] = []
    shown: list[PoolBuild] = []
    build = _builder(tmp_path, mirrors, manifest, commands, shown)
    (done,) = build()
    assert done.built and done.has_issue, done.skipped
    assert shown == [done]  # each case shown as it ends
    case_dir = tmp_path / "out" / "sympy__sympy-1"
    case = json.loads((case_dir / "case.json").read_text())
    assert case["failing_tests"] == [
        "pkg/tests/test_mod.py::test_double_exists",
        "pkg/tests/test_mod.py::TestMore::test_new",
    ]
    assert sorted(case["pass_to_pass"]) == [
        "pkg/tests/test_mod.py::TestMore::test_kept",
        "pkg/tests/test_mod.py::test_triple",
    ]
    assert case["test_files"] == ["pkg/tests/test_mod.py"]
    assert (case["buggy_commit"], case["fixed_commit"], case["source"]) == (base, merge, "swebench")
    assert (case_dir / "issue.md").read_text() == "double is off by one\n"
    gold = json.loads((case_dir / "gold.json").read_text())
    assert gold["files"] == ["pkg/mod.py"] and "doc/notes.rst" not in gold["patch"]
    with tarfile.open(case_dir / "repo.tar.gz") as tar:
        tests = tar.extractfile("pkg/tests/test_mod.py")
        assert tests is not None and tests.read().decode() == _PR_TESTS
    with tarfile.open(case_dir / "repo-issue.tar.gz") as tar:
        tests = tar.extractfile("pkg/tests/test_mod.py")
        assert tests is not None and tests.read().decode() == _TESTS
    ran = len(commands)
    (again,) = build()
    assert again.built and len(commands) == ran  # found built: nothing ran again


def test_a_pr_whose_tests_pass_at_base_is_skipped_and_remembered(tmp_path: Path):
    passing = _PR_TESTS.replace("double(2) == 4", "double(2) == 5").replace(
        "double(3) == 6", "double(3) == 7"
    )
    base, merge = _merged_pr(
        tmp_path / "r", {"pkg/mod.py": _BUGGY + "\n", "pkg/tests/test_mod.py": passing}
    )
    mirrors, manifest = _mirrors(tmp_path, [("sympy__sympy-2", base, merge)])
    commands: list[str] = []
    build = _builder(tmp_path, mirrors, manifest, commands, [])
    (done,) = build()
    assert not done.built and done.skipped == "PR's tests pass at base"
    ran = len(commands)
    (again,) = build()
    assert again.skipped == "PR's tests pass at base" and len(commands) == ran
    assert not (tmp_path / "out" / "sympy__sympy-2").exists()


def test_a_missing_manifest_is_a_one_line_error_not_a_traceback(tmp_path: Path):
    with pytest.raises(InputError, match=r"no SWE-bench manifest at .*manifest\.json"):
        build_sympy(tmp_path / "out", tmp_path, manifest=tmp_path / "shared" / "manifest.json")


def test_the_sympy_venv_is_made_in_the_pools_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """An eval of ``out`` takes ``out/venvs``; a venv made elsewhere (the default pool's,
    before) left a pool built with ``--out`` without the venv its cases were built with."""
    import fixbugs.eval.pool.swebench as swebench

    base, merge = _merged_pr(tmp_path / "r", _FIX_PR)
    mirrors, manifest = _mirrors(tmp_path, [("sympy__sympy-1", base, merge)])
    made: list[Path] = []

    def env(python: str, reqs: object, extra: object, *, cache_dir: Path) -> Path:
        made.append(cache_dir)
        return user_python().parent

    monkeypatch.setattr(swebench, "ensure_python_env", env)
    commands: list[str] = []
    (done,) = build_sympy(
        tmp_path / "out",
        mirrors,
        manifest=manifest,
        workspace=functools.partial(PlainWorkspace.create, commands=commands),
    )
    assert done.built, done.skipped
    assert made == [tmp_path / "out" / "venvs"]
