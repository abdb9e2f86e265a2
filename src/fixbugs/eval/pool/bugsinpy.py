"""The pool's BugsInPy source: real bugs of projects no FixBugs rule was written against.

:func:`build_bugsinpy` reads each bug of the chosen projects from the
BugsInPy mirror (:mod:`.bugsinpy_bug`), takes its trees from the project's
own mirror (renamed repositories are found under their new name: the git
objects are the same), makes its venv from its pins (:mod:`.pins`), checks
it (:mod:`.verify`) and writes it (:mod:`.casefiles`). Cases whose tests do
not hold are skipped with the reason; a built case is never rebuilt, but
gains its issue text when one has arrived since.
"""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Collection
from dataclasses import replace
from pathlib import Path

from fixbugs.errors import InputError
from fixbugs.eval.pool.bugsinpy_bug import BugsInPyBug, github_repo, parse_bug
from fixbugs.eval.pool.casefiles import (
    VENVS,
    CaseMeta,
    GoldFile,
    cut_output,
    gold_of_patch,
    has_commit,
    pack_tree,
    report_text,
    tree_at,
    write_json,
)
from fixbugs.eval.pool.outcome import PoolBuild
from fixbugs.eval.pool.pins import installable_pins
from fixbugs.eval.pool.verify import check_case
from fixbugs.eval.score import validate_patch
from fixbugs.pyenv.testenv import ensure_python_env
from fixbugs.sandbox.hosttools import git_env, run_tool

__all__ = ["BUGSINPY", "EXCLUDED", "PROJECTS", "RENAMED", "build_bugsinpy", "find_mirror"]

BUGSINPY = "soarsmu/BugsInPy"
# projects whose environments build under 3.8
PROJECTS = ("fastapi", "httpie", "luigi", "sanic", "scrapy")
# the dev sets' projects, and those kept back for evaluation: never in the pool
EXCLUDED = frozenset(
    {"thefuck", "tornado", "black", "youtube-dl", "tqdm", "cookiecutter", "PySnooper"}
)
RENAMED = {
    "tiangolo/fastapi": "fastapi/fastapi",
    "huge-success/sanic": "sanic-org/sanic",
    "jakubroztocil/httpie": "httpie/httpie",
}
PYTHON = "3.8"


def _mirror_dir(mirrors: Path, repo: str) -> Path:
    return mirrors / repo.replace("/", "+") / "repo"


def find_mirror(mirrors: Path, repo: str, commit: str) -> Path:
    """The bare mirror of ``repo`` (or its renamed self) that holds ``commit``."""
    name = repo.split("/")[-1]
    tried = [_mirror_dir(mirrors, repo)]
    if repo in RENAMED:
        tried.append(_mirror_dir(mirrors, RENAMED[repo]))
    tried += sorted(p / "repo" for p in mirrors.glob(f"*+{name}") if p / "repo" not in tried)
    for m in tried:
        if m.is_dir() and has_commit(m, commit):
            return m
    new = RENAMED.get(repo, repo)
    raise InputError(f"no mirror at {tried[0]} holds {commit[:10]}: fetch github:{new} first")


def _export_bugs(bip: Path, project: str, dest: Path) -> Path | None:
    """BugsInPy's folder of ``project`` in ``dest``, or None when BugsInPy has none."""
    run = run_tool(
        ["git", f"--git-dir={bip}", "archive", "--format=tar", "HEAD", f"projects/{project}"],
        env=git_env(),
        timeout_s=300,
    )
    if not run.ok:
        return None
    with tarfile.open(fileobj=io.BytesIO(run.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return dest / "projects" / project


def _case_env(pins: tuple[str, ...], venvs: Path) -> tuple[Path, bool]:
    """The case venv, and whether it took ``--no-deps``: a frozen list that pip cannot
    install with its dependencies (pins its resolver finds in conflict, a dependency with
    no distribution here such as ``pywin32``) is installed as frozen, each pin alone."""
    try:
        return ensure_python_env(PYTHON, pins, (), cache_dir=venvs), False
    except InputError:
        return ensure_python_env(PYTHON, pins, (), cache_dir=venvs, no_deps=True), True


def _bug_order(p: Path) -> int:
    return int(p.name) if p.name.isdigit() else 1 << 30


async def _build_one(
    bug: BugsInPyBug, repo: str, out: Path, mirrors: Path, issues: Path
) -> PoolBuild:
    cid = bug.case_id
    mirror = find_mirror(mirrors, repo, bug.buggy_commit)
    if not has_commit(mirror, bug.fixed_commit):
        raise InputError(f"{mirror} lacks the fixed commit {bug.fixed_commit[:10]}")
    venvs = out / VENVS
    venvs.mkdir(parents=True, exist_ok=True)
    pins = await asyncio.to_thread(installable_pins, PYTHON, bug.pins, venvs)
    python_bin, no_deps = await asyncio.to_thread(_case_env, pins.kept, venvs)
    test_command = "python -m pytest " + " ".join(bug.failing_tests)
    stage = out / f".{cid}.partial"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    try:
        with tempfile.TemporaryDirectory(prefix=f"fixbugs-pool-{cid}-") as tmp:
            tree = Path(tmp) / bug.project
            tree_at(
                mirror,
                bug.buggy_commit,
                tree,
                overlay_from=bug.fixed_commit,
                overlay=bug.test_files,
            )
            checked = await check_case(
                tree,
                python_bin,
                test_command=test_command,
                failing=bug.failing_tests,
                test_files=bug.test_files,
                gold_patch=bug.patch,
                project=bug.project,
            )
            if checked.skipped:
                return PoolBuild(cid, "bugsinpy", skipped=checked.skipped)
            pack_tree(tree, stage / "repo.tar.gz")
        files, hunks = gold_of_patch(bug.patch)
        meta = CaseMeta(
            cid,
            bug.project,
            PYTHON,
            bug.buggy_commit,
            bug.fixed_commit,
            bug.failing_tests,
            bug.test_files,
            test_command,
            pins.kept,
            pins.dropped,
            checked.pass_to_pass,
            "bugsinpy",
            install_no_deps=no_deps,
        )
        write_json(stage / "case.json", meta)
        write_json(stage / "gold.json", GoldFile(files, hunks, bug.patch))
        (stage / "requirements.txt").write_text("".join(p + "\n" for p in pins.kept))
        shown = cut_output(checked.output, checked.paths)
        (stage / "report.md").write_text(
            report_text(bug.failing_tests, test_command, shown, PYTHON)
        )
        # the scorer itself must take the real fix from these very files
        val = await validate_patch(stage, bug.patch, python_bin)
        if not val.validated:
            return PoolBuild(
                cid, "bugsinpy", skipped=f"the scorer refuses the real fix: {val.detail}"
            )
        final = out / cid
        shutil.rmtree(final, ignore_errors=True)
        stage.rename(final)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    built = PoolBuild(cid, "bugsinpy", case_dir=final)
    return _with_issue(built, lambda: mirror, bug.buggy_commit, issues)


def _with_issue(
    built: PoolBuild, mirror: Callable[[], Path], buggy: str, issues: Path
) -> PoolBuild:
    """Add the user's issue text and the tree as it was (only the tests of then) when one
    exists and the case lacks it."""
    assert built.case_dir is not None
    case = built.case_dir
    text = issues / f"{built.case_id}.md"
    if not text.is_file():
        return built
    if not (case / "issue.md").is_file() or not (case / "repo-issue.tar.gz").is_file():
        with tempfile.TemporaryDirectory(prefix="fixbugs-pool-issue-") as tmp:
            tree = Path(tmp) / "repo"
            tree_at(mirror(), buggy, tree)
            pack_tree(tree, case / "repo-issue.tar.gz.partial")
        (case / "repo-issue.tar.gz.partial").rename(case / "repo-issue.tar.gz")
        shutil.copyfile(text, case / "issue.md")
    meta = json.loads((case / "case.json").read_text())
    if not meta.get("has_issue"):
        meta["has_issue"] = True
        write_json(case / "case.json", meta)
    return replace(built, has_issue=True)


def build_bugsinpy(
    out: Path,
    mirrors: Path,
    *,
    only: Collection[str] = (),
    projects: Collection[str] = (),
    issues: Path | None = None,
    on_case: Callable[[PoolBuild], None] | None = None,
) -> list[PoolBuild]:
    """Build (or find built) every BugsInPy case of ``projects`` (default :data:`PROJECTS`;
    those BugsInPy lacks are another source's) under ``out``, one :class:`PoolBuild` each;
    ``only``: just these case ids."""
    refused = sorted(set(projects) & EXCLUDED)
    if refused:
        raise InputError(f"--project {refused[0]}: a dev set's or kept for evaluation, not pooled")
    bip = _mirror_dir(mirrors, BUGSINPY)
    if not bip.is_dir():
        raise InputError(f"no mirror at {bip}: fetch github:{BUGSINPY} first")
    issues = issues if issues is not None else _default_issues()
    out.mkdir(parents=True, exist_ok=True)
    results: list[PoolBuild] = []
    with tempfile.TemporaryDirectory(prefix="fixbugs-bugsinpy-") as tmp:
        for project in projects or PROJECTS:
            folder = _export_bugs(bip, project, Path(tmp))
            if folder is None:
                continue
            repo = github_repo((folder / "project.info").read_text(errors="replace"))
            for bug_dir in sorted((folder / "bugs").iterdir(), key=_bug_order):
                cid = f"{project}-{bug_dir.name}"
                if only and cid not in only:
                    continue
                res = _one(bug_dir, project, repo, out, mirrors, issues)
                results.append(res)
                if on_case:
                    on_case(res)
    return results


def _one(
    bug_dir: Path, project: str, repo: str | None, out: Path, mirrors: Path, issues: Path
) -> PoolBuild:
    cid = f"{project}-{bug_dir.name}"
    try:
        bug = parse_bug(bug_dir, project)
        if repo is None:
            raise InputError(f"BugsInPy's {project}/project.info names no GitHub repository")
        done = out / cid
        if (done / "case.json").is_file() and (done / "gold.json").is_file():
            built = PoolBuild(cid, "bugsinpy", case_dir=done)
            found = repo

            def mirror() -> Path:
                return find_mirror(mirrors, found, bug.buggy_commit)

            return _with_issue(built, mirror, bug.buggy_commit, issues)
        return asyncio.run(_build_one(bug, repo, out, mirrors, issues))
    except InputError as exc:
        return PoolBuild(cid, "bugsinpy", skipped=str(exc))


def _default_issues() -> Path:
    """``eval/pool/issues`` of the checkout this module runs from."""
    return Path(__file__).resolve().parents[4] / "eval" / "pool" / "issues"
