"""``fixbugs run --branch``: one commit on a new branch, nothing of the repository's git runs.

The repository here is hostile the way a cloned one can be: its
``.git/config`` has a smudge, clean and process filter that a committed
``.gitattributes`` applies, ``core.fsmonitor``, ``core.hooksPath`` (and
``.git/hooks``) with every hook a commit or a ref update runs,
``commit.gpgSign`` with a ``gpg.program``, and an ``include`` of more of
the same; each command would touch a marker file. After ``--branch`` no
marker exists, the branch holds one commit on HEAD whose tree is HEAD's
with the fix, and every file outside ``.git/objects`` and the new ref
(work tree, ``.git/index``, ``HEAD``, config) is byte-identical. Links
planted where the branch or an object would go are not followed.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from gitkit import git

from fixbugs.errors import InputError
from fixbugs.repair.verdict import VerdictLevel
from fixbugs.run.branch import branch_report, check_branch
from fixbugs.run.handoff import identity
from fixbugs.run.report_schema import ReportModel

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PATCH = textwrap.dedent(
    """\
    --- a/calc.py
    +++ b/calc.py
    @@ -1,2 +1,2 @@
     def add(a, b):
    -    return a - b
    +    return a + b
    """
)
HOOKS = (
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "reference-transaction",
    "post-index-change",
    "post-checkout",
    "pre-auto-gc",
)
WHO = {
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "ada@example.org",
    "GIT_AUTHOR_DATE": "2024-01-02T03:04:05Z",
    "GIT_COMMITTER_DATE": "2024-01-02T03:04:05Z",
}


def _git(cwd: Path, *args: str) -> str:
    return git(cwd, *args, safe=True)  # plumbing reads only; the repository's commands off


@dataclass(frozen=True)
class Hostile:
    repo: Path
    markers: Path

    def seen(self) -> list[str]:
        return sorted(p.name for p in self.markers.glob("MARK-*"))


def _script(markers: Path, name: str) -> Path:
    """A command that touches its marker and passes its input through (a working filter)."""
    path = markers / f"{name}.sh"
    path.write_text(f"#!/bin/sh\ntouch {markers / ('MARK-' + name)}\ncat\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def hostile(tmp_path: Path) -> Hostile:
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text(BUGGY)
    (repo / "test_calc.py").write_text(TEST)
    (repo / ".gitattributes").write_text("* filter=evil\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "init")
    hooks = markers / "hooks"
    hooks.mkdir()
    for name in HOOKS:
        for folder in (hooks, repo / ".git" / "hooks"):
            (folder / name).write_text(f"#!/bin/sh\ntouch {markers / ('MARK-hook-' + name)}\n")
            (folder / name).chmod(0o755)
    extra = markers / "extra.config"
    extra.write_text(f"[core]\n\tfsmonitor = {_script(markers, 'included')}\n")
    with (repo / ".git" / "config").open("a") as config:
        config.write(
            textwrap.dedent(
                f"""\
                [filter "evil"]
                \tsmudge = {_script(markers, "smudge")}
                \tclean = {_script(markers, "clean")}
                \tprocess = {_script(markers, "process")}
                \trequired = true
                [core]
                \tfsmonitor = {_script(markers, "fsmonitor")}
                \thooksPath = {hooks}
                [commit]
                \tgpgSign = true
                [gpg]
                \tprogram = {_script(markers, "gpg")}
                [include]
                \tpath = {extra}
                """
            )
        )
    return Hostile(repo, markers)


def _report(level: VerdictLevel = VerdictLevel.VALIDATED, patch: str | None = PATCH) -> ReportModel:
    return ReportModel.model_validate(
        {
            "title": "add subtracts",
            "ranked_files": [],
            "root_cause": {
                "path": "calc.py",
                "function": "add",
                "lines": [2, 2],
                "explanation": "returns a - b where the sum is meant",
                "origin": "sbfl",
            },
            "patch": patch,
            "validated": level == VerdictLevel.VALIDATED,
            "verdict": level.value,
            "validation": {
                "summary": "1 of 4 candidates validated",
                "tried": 4,
                "failed_checks": (
                    [{"kind": "untested", "why": "no test imports calc"}]
                    if level == VerdictLevel.PASSES_TESTS
                    else []
                ),
            },
            "reproduction": {
                "command": "pytest -q test_calc.py",
                "origin": "given",
                "confirmed": True,
                "status": "confirmed",
                "summary": "test_add failed: assert -1 == 5",
            },
            "first_hypothesis_s": None,
            "total_s": 1.0,
            "stages": {},
        }
    )


def _snapshot(repo: Path) -> dict[str, str]:
    """Every file and link of the repository but the object store and the refs, hashed."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(repo):
        here = Path(dirpath)
        rel = here.relative_to(repo).as_posix()
        if rel in (".git/objects", ".git/refs"):
            dirnames[:] = []
            continue
        for name in [*filenames, *(d for d in dirnames if (here / d).is_symlink())]:
            p = here / name
            data = os.readlink(p).encode() if p.is_symlink() else p.read_bytes()
            out[(here / name).relative_to(repo).as_posix()] = hashlib.sha256(data).hexdigest()
    return out


def _objects(repo: Path) -> dict[str, bytes]:
    objects = repo / ".git" / "objects"
    return {
        p.relative_to(objects).as_posix(): p.read_bytes() for p in objects.rglob("*") if p.is_file()
    }


def _refs(repo: Path) -> list[str]:
    return sorted(
        p.relative_to(repo / ".git").as_posix() for p in (repo / ".git" / "refs").rglob("*")
    )


def test_one_commit_on_a_new_branch_and_nothing_of_the_repository_runs(hostile: Hostile) -> None:
    repo = hostile.repo
    before, objects, refs = _snapshot(repo), _objects(repo), _refs(repo)
    head = _git(repo, "rev-parse", "HEAD")
    line = branch_report(_report(), repo, "fix/add", environ=WHO)
    assert line.startswith("branch fix/add made in ") and "the validated fix" in line
    assert "author Ada <ada@example.org> (from GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL)" in line
    assert hostile.seen() == []
    assert _snapshot(repo) == before  # work tree, .git/index, HEAD, config: byte-identical
    after = _objects(repo)
    assert {k: after[k] for k in objects} == objects  # objects only added
    assert _refs(repo) == sorted([*refs, "refs/heads/fix", "refs/heads/fix/add"])
    # one commit, on HEAD, whose tree is HEAD's with the fix
    assert _git(repo, "rev-list", f"{head}..fix/add").splitlines() == [
        _git(repo, "rev-parse", "fix/add")
    ]
    assert _git(repo, "rev-parse", "fix/add^") == head
    fixed = subprocess.run(
        ["git", "hash-object", "--no-filters", "--stdin"],
        input=FIXED, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    expected = _git(repo, "ls-tree", "HEAD").replace(_git(repo, "rev-parse", "HEAD:calc.py"), fixed)
    assert _git(repo, "ls-tree", "fix/add") == expected
    commit = _git(repo, "cat-file", "-p", "fix/add")
    assert "gpgsig" not in commit
    assert "author Ada <ada@example.org> 1704164645 +0000" in commit
    assert "committer Ada <ada@example.org>" in commit
    assert "Root cause: calc.py:2 in add" in commit and "Validation: validated" in commit
    assert _git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert _git(repo, "rev-parse", "main") == head
    assert hostile.seen() == []


def test_the_repository_is_hostile_to_a_plain_git_commit(hostile: Hostile, tmp_path: Path) -> None:
    """The control: git as a user runs it in (a copy of) this repository runs its commands."""
    copy = tmp_path / "copy"
    shutil.copytree(hostile.repo, copy, symlinks=True)
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, **WHO}
    env["GIT_COMMITTER_NAME"], env["GIT_COMMITTER_EMAIL"] = "c", "c@c"
    (copy / "calc.py").write_text(FIXED)
    subprocess.run(["git", "commit", "-qam", "x"], cwd=copy, env=env, capture_output=True)
    assert {"MARK-process", "MARK-included"} <= set(hostile.seen())  # then the commit fails
    config = copy / ".git" / "config"  # without the process filter, which fails the commit
    config.write_text("".join(x for x in config.read_text().splitlines(True) if "process" not in x))
    subprocess.run(["git", "commit", "-qam", "x"], cwd=copy, env=env, capture_output=True)
    seen = set(hostile.seen())
    assert {"MARK-clean", "MARK-hook-pre-commit", "MARK-gpg"} <= seen, seen


def test_a_fix_that_only_passes_tests_needs_force(hostile: Hostile) -> None:
    repo = hostile.repo
    before, objects = _snapshot(repo), _objects(repo)
    report = _report(VerdictLevel.PASSES_TESTS)
    line = branch_report(report, repo, "fix/add")
    assert re.match(r"no branch made: the fix passes tests but is not validated.*--force", line)
    assert (_snapshot(repo), _objects(repo)) == (before, objects)
    assert not (repo / ".git" / "refs" / "heads" / "fix").exists()
    line = branch_report(report, repo, "fix/add", force=True, environ={})
    assert "a fix that is not validated (--force)" in line
    assert "FixBugs <fixbugs@localhost> (FixBugs' default" in line
    message = _git(repo, "log", "-1", "--format=%B", "fix/add")
    assert "committed with --force" in message
    assert (
        "Not held: no test of the project exercises the change: no test imports calc"
        in " ".join(message.split())
    )
    assert hostile.seen() == []


def test_no_fix_makes_no_branch(hostile: Hostile) -> None:
    before = _snapshot(hostile.repo), _objects(hostile.repo)
    line = branch_report(_report(VerdictLevel.NO_FIX, None), hostile.repo, "fix/add")
    assert line.startswith("no branch made: the run has no fix")
    assert (_snapshot(hostile.repo), _objects(hostile.repo)) == before


def test_an_existing_or_clashing_branch_is_refused(hostile: Hostile) -> None:
    repo = hostile.repo
    branch_report(_report(), repo, "fix/add")
    with pytest.raises(InputError, match="branch fix/add already exists"):
        check_branch(repo, "fix/add")
    _git(repo, "pack-refs", "--all")  # packed, no loose file left
    assert not (repo / ".git" / "refs" / "heads" / "fix" / "add").exists()
    with pytest.raises(InputError, match="already exists"):
        branch_report(_report(), repo, "fix/add")
    with pytest.raises(InputError, match="clashes"):
        check_branch(repo, "fix")  # a folder of branches
    with pytest.raises(InputError, match="clashes"):
        check_branch(repo, "main/x")  # below a branch
    assert hostile.seen() == []


@pytest.mark.parametrize(
    "name",
    ["", "a..b", "-x", "HEAD", "x.lock", "a b", "@{-1}", "a\nb", "a\0b", "fix/", "/x", "a~1"],
)
def test_a_bad_branch_name_is_refused(hostile: Hostile, name: str) -> None:
    with pytest.raises(InputError, match="is not a valid branch name"):
        check_branch(hostile.repo, name)


def test_a_git_file_or_link_is_not_followed(hostile: Hostile, tmp_path: Path) -> None:
    worktree = tmp_path / "linked"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {hostile.repo / '.git'}\n")
    with pytest.raises(InputError, match="is a file"):
        check_branch(worktree, "fix/add")
    linked = tmp_path / "via-link"
    linked.mkdir()
    (linked / ".git").symlink_to(hostile.repo / ".git")
    with pytest.raises(InputError, match="is a link"):
        check_branch(linked, "fix/add")
    with pytest.raises(InputError, match=r"has no \.git folder"):
        check_branch(tmp_path / "markers", "fix/add")
    assert _refs(hostile.repo) == ["refs/heads", "refs/heads/main", "refs/tags"]


def test_a_new_repository_without_a_commit_is_refused(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "fresh")
    with pytest.raises(InputError, match="names no commit"):
        check_branch(tmp_path / "fresh", "fix/add")


def test_a_link_planted_at_the_branch_is_not_followed(hostile: Hostile, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    heads = hostile.repo / ".git" / "refs" / "heads"
    (heads / "fix").mkdir()
    (heads / "fix" / "add").symlink_to(outside / "ref")
    with pytest.raises(InputError, match="is a link"):
        branch_report(_report(), hostile.repo, "fix/add")
    (heads / "fix" / "add").unlink()
    (heads / "fix").rmdir()
    (heads / "fix").symlink_to(outside)  # the folder above it
    with pytest.raises(InputError, match="is a link"):
        branch_report(_report(), hostile.repo, "fix/add")
    assert list(outside.iterdir()) == []
    assert hostile.seen() == []


def test_a_link_planted_at_an_object_folder_is_not_followed(
    hostile: Hostile, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    objects = hostile.repo / ".git" / "objects"
    for i in range(256):  # every folder the new objects could go to
        if not (objects / f"{i:02x}").exists():
            (objects / f"{i:02x}").symlink_to(outside)
    with pytest.raises(InputError, match="a link or a file, which FixBugs does not follow"):
        branch_report(_report(), hostile.repo, "fix/add")
    assert list(outside.iterdir()) == []
    assert not (hostile.repo / ".git" / "refs" / "heads" / "fix").exists()


def test_a_fix_that_does_not_apply_to_head_is_refused(hostile: Hostile) -> None:
    other = PATCH.replace("a - b", "a * b")
    with pytest.raises(InputError, match="does not apply to HEAD"):
        branch_report(_report(patch=other), hostile.repo, "fix/add")
    assert not (hostile.repo / ".git" / "refs" / "heads" / "fix").exists()


def test_a_work_tree_that_differs_from_head_is_said(hostile: Hostile) -> None:
    (hostile.repo / "calc.py").write_text(BUGGY + "\n# local edit\n")
    line = branch_report(_report(), hostile.repo, "fix/add")
    assert "calc.py in the work tree, where the run validated the fix, differs from HEAD" in line
    assert (hostile.repo / "calc.py").read_text() == BUGGY + "\n# local edit\n"


def test_a_bare_repository_gets_its_branch(hostile: Hostile, tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(hostile.repo), str(bare))
    line = branch_report(_report(), bare, "fix/add")
    assert "branch fix/add made" in line
    assert _git(bare, "rev-parse", "fix/add^") == _git(bare, "rev-parse", "main")


def test_the_identity_comes_from_the_environment_or_is_fixed() -> None:
    assert identity({}).author == "FixBugs <fixbugs@localhost>"
    who = identity({"GIT_COMMITTER_NAME": "C", "GIT_COMMITTER_EMAIL": "c@x"})
    assert who.author == "C <c@x>" and who.source == "from GIT_COMMITTER_NAME, GIT_COMMITTER_EMAIL"
    assert who.env["GIT_COMMITTER_NAME"] == "C"
    assert "GIT_AUTHOR_DATE" not in identity({"GIT_AUTHOR_DATE": ""}).env


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files another owner needs root")
def test_as_root_what_is_written_belongs_to_the_repository_owner(hostile: Hostile) -> None:
    repo = hostile.repo
    for p in [repo, *repo.rglob("*")]:
        os.lchown(p, 4242, 4243)
    objects = set(_objects(repo))
    branch_report(_report(), repo, "fix/owned", environ=WHO)
    written = [
        repo / ".git" / "refs" / "heads" / "fix",
        repo / ".git" / "refs" / "heads" / "fix" / "owned",
    ]
    written += [repo / ".git" / "objects" / k for k in set(_objects(repo)) - objects]
    written += [p.parent for p in written[2:]]
    assert len(written) > 3
    assert {(p.stat().st_uid, p.stat().st_gid) for p in written} == {(4242, 4243)}
