"""The pool's SWE-bench Verified sympy instances, as cases whose PR tests run at the base.

``../shared/swebench-dev/manifest.json`` names each instance's base commit,
merge commit and gold files; the issue text is item ``idx`` of
``swe_bench_verified.json`` in the mirror of github:sarahpannn/flexflow-serve.
For each sympy instance this takes the PR's own diff (:mod:`.prdiff`), puts
its test changes on the base tree, and keeps the case only when the test
functions the PR adds or changes fail there and pass once the gold patch is
applied (:mod:`.testruns`, in the sandbox); the other tests of the same
modules that pass both times become ``pass_to_pass``. Anything else is a skip
with its reason in one line.

All instances share one venv: Python 3.9 (what SWE-bench runs sympy with, and
old enough for sympy of 2017) with mpmath 1.3.0 and pytest 7.1 (the last
pytest with the ``py`` library that sympy before 1.6 imports ``py.test`` from),
every pin fixed, no coverage.py. The mirrors are the ``fetch`` tool's copies
of public repositories; their trees carry no ``export-subst`` or filter
attributes, so ``git archive`` writes the commit's files as committed.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from fixbugs.diffs import added_lines
from fixbugs.errors import InputError
from fixbugs.eval.archive import extract_tree
from fixbugs.eval.pool.casefiles import VENVS, GoldHunk
from fixbugs.eval.pool.outcome import PoolBuild
from fixbugs.eval.pool.prdiff import PrPatches, changed_tests, pr_diff, split_pr
from fixbugs.eval.pool.select import Selection, select_tests
from fixbugs.eval.pool.testruns import pytest_argv, run_commands, run_modules
from fixbugs.inputs.hostgit import apply_diff
from fixbugs.pyenv.testenv import ensure_python_env
from fixbugs.pyenv.testid import TestId
from fixbugs.sandbox import Sandbox, WorkspaceFactory
from fixbugs.sandbox.hosttools import git_env, run_tool

__all__ = [
    "SYMPY_PYTHON",
    "SYMPY_REQUIREMENTS",
    "Instance",
    "build_sympy",
    "default_manifest",
    "load_manifest",
]

SYMPY_PYTHON = "3.9"
SYMPY_REQUIREMENTS = (
    "mpmath==1.3.0",
    "pytest==7.1.3",
    "py==1.11.0",
    "pluggy==1.6.0",
    "attrs==26.1.0",
    "iniconfig==2.1.0",
    "packaging==26.3",
    "tomli==2.5.0",
)
MODULE_TIMEOUT_S = 300.0
_STATEMENTS_MIRROR = "sarahpannn+flexflow-serve"
_STATEMENTS_FILE = "swe_bench_verified.json"
_FILES = ("repo.tar.gz", "repo-issue.tar.gz", "report.md", "issue.md", "gold.json")
_SKIPS = ".swebench-skipped"  # remembered skips that a test run decided: <id>.txt


@dataclass(frozen=True, slots=True)
class Instance:
    """One manifest entry: a SWE-bench Verified instance and its PR's gold, from history."""

    id: str
    idx: int
    repo: str
    base_commit: str
    merge_commit: str
    pr: int
    gold_files: tuple[str, ...]
    hunks: tuple[GoldHunk, ...]


class _Skip(Exception):
    """An instance that cannot become a case; ``remember`` when a test run decided it."""

    def __init__(self, reason: str, *, remember: bool = False) -> None:
        super().__init__(reason)
        self.reason = " ".join(reason.split())[:300]
        self.remember = remember


def default_manifest() -> Path:
    """``shared/swebench-dev/manifest.json`` of the nearest folder above this checkout, or
    above the working folder, that holds one (the main checkout and its worktrees share
    ``/work/shared``; a worktree elsewhere finds it from a working folder under ``/work``)."""
    here = Path(__file__).resolve()
    cwd = Path.cwd().resolve()
    for parent in (*here.parents, cwd, *cwd.parents):
        candidate = parent / "shared" / "swebench-dev" / "manifest.json"
        if candidate.is_file():
            return candidate
    return here.parents[4].parent / "shared" / "swebench-dev" / "manifest.json"


def load_manifest(path: Path) -> list[Instance]:
    """The manifest's instances; ValueError on a malformed one, InputError on none there."""
    if not path.is_file():
        raise InputError(
            f"no SWE-bench manifest at {path}: the pool's sympy cases are those of "
            "shared/swebench-dev/manifest.json, looked for above this checkout and the "
            "working folder"
        )
    raw = json.loads(path.read_text())
    if not isinstance(raw, list):
        raise ValueError(f"{path}: not a list of instances")
    out: list[Instance] = []
    for item in raw:
        try:
            out.append(
                Instance(
                    id=str(item["id"]),
                    idx=int(item["idx"]),
                    repo=str(item["repo"]),
                    base_commit=str(item["base_commit"]),
                    merge_commit=str(item["merge_commit"]),
                    pr=int(item["pr"]),
                    gold_files=tuple(str(f) for f in item["gold_files"]),
                    hunks=tuple(
                        GoldHunk(str(h["file"]), int(h["start"]), int(h["end"]))
                        for h in item["hunks"]
                    ),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: malformed instance {str(item)[:80]!r}: {exc}") from exc
    return out


def build_sympy(
    out: Path,
    mirrors: Path,
    *,
    only: Collection[str] = (),
    manifest: Path | None = None,
    python_bin: Path | None = None,
    venvs: Path | None = None,
    timeout_s: float = MODULE_TIMEOUT_S,
    workspace: WorkspaceFactory = Sandbox.create,
    retry_skipped: bool = False,
    on_case: Callable[[PoolBuild], None] | None = None,
) -> list[PoolBuild]:
    """Build (or find built) ``out/<id>`` for each sympy instance of the manifest,
    each one given to ``on_case`` as it ends (a build takes minutes a case).

    ``mirrors`` holds the ``fetch`` tool's bare mirrors (``<owner>+<name>/repo``).
    ``python_bin`` is the tests' venv ``bin`` (default: the shared sympy venv under
    ``venvs``, ``out/venvs`` as the BugsInPy builder's, made once with pip, so an eval of
    ``out`` finds the venv its cases were built with). A case already
    built and complete is not rebuilt; a skip a test run decided is remembered in
    ``out/.swebench-skipped`` unless ``retry_skipped``.
    """
    instances = [
        i for i in load_manifest(manifest or default_manifest()) if i.repo == "sympy/sympy"
    ]
    if only:
        instances = [i for i in instances if i.id in set(only)]
    git_dir = mirrors / "sympy+sympy" / "repo"
    texts = _statements(mirrors / _STATEMENTS_MIRROR / "repo")

    def one(inst: Instance) -> PoolBuild:
        nonlocal python_bin
        case_dir = out / inst.id
        if _is_built(case_dir, inst.id):
            return PoolBuild(inst.id, "swebench", case_dir=case_dir, has_issue=True)
        remembered = out / _SKIPS / f"{inst.id}.txt"
        if remembered.is_file() and not retry_skipped:
            return PoolBuild(inst.id, "swebench", skipped=remembered.read_text().strip())
        try:
            if not git_dir.is_dir():
                raise _Skip(f"no mirror of sympy/sympy at {git_dir}")
            if texts is None or not 0 <= inst.idx < len(texts):
                raise _Skip(f"no issue text: {_STATEMENTS_FILE} lacks item {inst.idx}")
            if python_bin is None:
                python_bin = ensure_python_env(
                    SYMPY_PYTHON, SYMPY_REQUIREMENTS, (), cache_dir=venvs or out / VENVS
                )
            _build(inst, case_dir, git_dir, texts[inst.idx], python_bin, timeout_s, workspace)
        except InputError as exc:  # no venv, no sandbox: nothing about the instance
            return PoolBuild(inst.id, "swebench", skipped=str(exc))
        except _Skip as skip:
            if skip.remember:
                remembered.parent.mkdir(parents=True, exist_ok=True)
                remembered.write_text(skip.reason + "\n")
            return PoolBuild(inst.id, "swebench", skipped=skip.reason)
        return PoolBuild(inst.id, "swebench", case_dir=case_dir, has_issue=True)

    results: list[PoolBuild] = []
    for inst in instances:
        results.append(one(inst))
        if on_case:
            on_case(results[-1])
    return results


def _statements(git_dir: Path) -> list[str] | None:
    """The 500 problem statements in SWE-bench Verified's order, or None when unreadable."""
    if not git_dir.is_dir():
        return None
    done = run_tool(
        ["git", f"--git-dir={git_dir}", "show", f"HEAD:{_STATEMENTS_FILE}"],
        timeout_s=120,
        env=git_env(),
    )
    if not done.ok:
        return None
    data = json.loads(done.stdout_text)
    return [str(t) for t in data] if isinstance(data, list) else None


def _is_built(case_dir: Path, case_id: str) -> bool:
    try:
        case = json.loads((case_dir / "case.json").read_text())
    except (OSError, ValueError):
        return False
    return (
        isinstance(case, dict)
        and case.get("id") == case_id
        and case.get("source") == "swebench"
        and all((case_dir / f).is_file() for f in _FILES)
    )


def _build(
    inst: Instance,
    case_dir: Path,
    git_dir: Path,
    text: str,
    python_bin: Path,
    timeout_s: float,
    workspace: WorkspaceFactory,
) -> None:
    try:
        pr = split_pr(pr_diff(git_dir, inst.base_commit, inst.merge_commit), inst.gold_files)
    except ValueError as exc:
        raise _Skip(f"no PR diff: {exc}") from exc
    absent = sorted(set(inst.gold_files) - {f.path for f in pr.gold})
    if absent:
        raise _Skip(f"gold file {absent[0]} is not in the PR's diff")
    if not pr.tests:
        raise _Skip("the PR changes no test file")
    with tempfile.TemporaryDirectory(prefix="fixbugs-pool-") as tmp_name:
        tmp = Path(tmp_name)
        issue_tgz = tmp / "repo-issue.tar.gz"
        _archive(git_dir, inst.base_commit, issue_tgz)
        before, after = tmp / "before", tmp / "after"
        extract_tree(issue_tgz, before)
        applied = apply_diff(pr.test_patch, before)
        if not applied.applied:
            raise _Skip(f"test patch does not apply at base: {_first(applied.message)}")
        candidates = _candidates(pr, before)
        if not candidates:
            raise _Skip("the PR's test diff adds or changes no test function")
        shutil.copytree(before, after, symlinks=True)
        applied = apply_diff(pr.gold_patch, after)
        if not applied.applied:
            raise _Skip(f"gold patch does not apply: {_first(applied.message)}")
        chosen = _verify(candidates, before, after, python_bin, timeout_s, workspace)
        _write_case(inst, case_dir, pr, chosen, text, before, issue_tgz)


def _first(message: str) -> str:
    lines = message.strip().splitlines()
    return lines[0] if lines else "no message"


def _archive(git_dir: Path, commit: str, dest: Path) -> None:
    done = run_tool(
        ["git", f"--git-dir={git_dir}", "archive", "--format=tar.gz", commit],
        timeout_s=600,
        env=git_env(),
    )
    if not done.ok:
        raise _Skip(f"git archive of {commit[:12]} failed: {_first(done.said())}")
    dest.write_bytes(done.stdout)


def _candidates(pr: PrPatches, tree: Path) -> list[str]:
    """Node ids of the test functions the PR's test diff adds or changes."""
    ids: list[str] = []
    for part in pr.tests:
        name = part.path.rsplit("/", 1)[-1]
        if part.deleted or not (name.startswith("test_") and name.endswith(".py")):
            continue
        source = (tree / part.path).read_text(errors="replace")
        ids.extend(changed_tests(part.path, source, added_lines(part.text)))
    return ids


def _verify(
    candidates: Sequence[str],
    before: Path,
    after: Path,
    python_bin: Path,
    timeout_s: float,
    workspace: WorkspaceFactory,
) -> Selection:
    """The failing and pass-to-pass tests, checked: the modules' runs before and after
    the gold patch, then the test command itself (fails before, passes after)."""
    modules = sorted({TestId.parse(c).path for c in candidates})
    runs = []
    for tree in (before, after):
        done = asyncio.run(
            run_modules(tree, modules, python_bin, timeout_s=timeout_s, workspace=workspace)
        )
        slow = next((r for r in done if r.timed_out), None)
        if slow is not None:
            raise _Skip(f"{slow.module} ran over {timeout_s:g} s", remember=True)
        runs.append(done)
    chosen = select_tests(candidates, runs[0], runs[1])
    if chosen.reason is not None:
        raise _Skip(chosen.reason, remember=True)
    argv = pytest_argv(python_bin, *chosen.failing)
    for tree, want_ok in ((before, False), (after, True)):
        (res,) = asyncio.run(
            run_commands(tree, [argv], python_bin, timeout_s=timeout_s, workspace=workspace)
        )
        if (res.returncode == 0) != want_ok or res.timed_out:
            state = "base + gold patch" if want_ok else "base"
            raise _Skip(
                f"the failing tests' command exits {res.returncode} at {state}", remember=True
            )
    return chosen


def _write_case(
    inst: Instance,
    case_dir: Path,
    pr: PrPatches,
    chosen: Selection,
    text: str,
    tree: Path,
    issue_tgz: Path,
) -> None:
    """Write every file into a staging folder beside ``case_dir``, then rename it into
    place: a half-written case is never taken for a built one."""
    staging = case_dir.with_name(f".{case_dir.name}.staging")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    _tar_tree(tree, staging / "repo.tar.gz")
    shutil.copyfile(issue_tgz, staging / "repo-issue.tar.gz")
    body = text if text.endswith("\n") else text + "\n"
    (staging / "report.md").write_text(body)
    (staging / "issue.md").write_text(body)
    command = "python -m pytest -p no:cacheprovider " + " ".join(
        shlex.quote(t) for t in chosen.failing
    )
    gold = {"files": list(inst.gold_files), "hunks": [asdict(h) for h in inst.hunks]}
    gold["patch"] = pr.gold_patch
    (staging / "gold.json").write_text(json.dumps(gold, indent=1) + "\n")
    (staging / "requirements.txt").write_text("\n".join(SYMPY_REQUIREMENTS) + "\n")
    case = {
        "id": inst.id,
        "project": "sympy",
        "python": SYMPY_PYTHON,
        "buggy_commit": inst.base_commit,
        "fixed_commit": inst.merge_commit,
        "failing_tests": list(chosen.failing),
        "test_files": list(pr.test_files),
        "test_command": command,
        "requirements": list(SYMPY_REQUIREMENTS),
        "pass_to_pass": list(chosen.pass_to_pass),
        "source": "swebench",
        "pr": inst.pr,
        "dropped_from_gold": list(pr.dropped),
    }
    (staging / "case.json").write_text(json.dumps(case, indent=1) + "\n")
    shutil.rmtree(case_dir, ignore_errors=True)
    staging.rename(case_dir)


def _tar_tree(tree: Path, dest: Path) -> None:
    """``tree``'s files at the top of a gzipped tar (the cases' layout), sorted."""
    with tarfile.open(dest, "w:gz") as tar:
        for path in sorted(tree.rglob("*")):
            tar.add(path, arcname=path.relative_to(tree).as_posix(), recursive=False)
