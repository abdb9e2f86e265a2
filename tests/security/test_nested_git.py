"""A test suite cannot break or steer the sandbox's diff with ``.git`` entries it writes.

Found while resolving issue 21: the diff ran ``git add -A`` over the copy,
so git walked what the repository's tests had written there. An empty
nested repository (``git init sub``, or a ``sub/.git`` of a ``HEAD`` and
empty ``objects/`` and ``refs/``) failed every diff ("does not have a
commit checked out"); a nested repository with a commit became a gitlink,
its files left out; a ``sub/.git`` *file* (or link) made git follow it to a
host repository and put that repository's HEAD into the diff; a ``.GIT``
folder failed the diff ("invalid path"); a FIFO named ``.gitignore`` hung
it; the copy's ``.gitattributes`` failed it (an encoding) or hid changes
(``-diff``). Each test writes these into the copy, as the
repository's tests would, beside a real source change: the diff succeeds,
shows the change and the folder's files as plain files, runs no command a
nested config names, and carries nothing of the host.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from gitkit import git
from hostile import NEEDS_NAMESPACES
from test_host_git import FIXED, Markers, committed_tree, deadline, poison

from fixbugs.sandbox import Sandbox

CHANGE = "+    return a + b"
SECRET = "HOST-SECRET-7c1f"


@pytest.fixture
def markers(tmp_path: Path) -> Markers:
    d = tmp_path / "markers"
    d.mkdir()
    return Markers(d)


@pytest.fixture
def host_repo(tmp_path: Path) -> Path:
    """A repository on the host, outside every sandbox, with a secret committed."""
    root = tmp_path / "host-repo"
    root.mkdir()
    (root / "secret.txt").write_text(SECRET + "\n")
    git(root, "init", "--quiet", "--template=")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "secret")
    return root


def head_of(repo: Path) -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    sb = Sandbox.create(committed_tree(tmp_path / "tree"), base_dir=tmp_path)
    try:
        yield sb
    finally:
        sb.close()


def write_sub(sb: Sandbox, name: str = "sub") -> None:
    """The folder's own file, which the diff must show as a plain new file."""
    (sb.root / name).mkdir(exist_ok=True)
    (sb.root / name / "x.py").write_text("x = 1\n")


def nested(sb: Sandbox, form: str, markers: Markers, host_repo: Path) -> None:
    """Write a nested ``.git`` of ``form`` into ``sub/``, as a hostile test would."""
    sub = sb.root / "sub"
    write_sub(sb)
    if form == "git init, no commit":
        git(sub, "init", "--quiet", "--template=")
        poison(sub / ".git", markers, info_attributes=True)
    elif form == "HEAD, no commit":
        for part in ("objects", "refs"):
            (sub / ".git" / part).mkdir(parents=True)
        (sub / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    elif form == "commits and a hostile config":
        git(sub, "init", "--quiet", "--template=")
        git(sub, "add", "-A")
        git(sub, "commit", "--quiet", "-m", "sub")
        poison(sub / ".git", markers, info_attributes=True)
    elif form == "gitdir: file to a host repository":
        (sub / ".git").write_text(f"gitdir: {host_repo / '.git'}\n")
    elif form == "link to a host repository":
        os.symlink(host_repo / ".git", sub / ".git")
    elif form == ".GIT folder":
        (sub / ".GIT").mkdir()
        (sub / ".GIT" / "config").write_text(f"[core]\n\tnote = {SECRET}\n")
    else:
        raise AssertionError(form)


def assert_plain(diff: str, host_repo: Path) -> None:
    """The real change and ``sub/x.py`` as a new file; no gitlink, ``.git`` path or host data."""
    assert CHANGE in diff
    assert "diff --git a/sub/x.py b/sub/x.py\nnew file mode 100644\n" in diff
    assert "+x = 1\n" in diff
    assert "Subproject commit" not in diff and "160000" not in diff
    assert not re.search(r"[ /]\.git(/| |$)", diff, re.IGNORECASE | re.MULTILINE)
    assert SECRET not in diff and head_of(host_repo) not in diff


FORMS = [
    "git init, no commit",
    "HEAD, no commit",
    "commits and a hostile config",
    "gitdir: file to a host repository",
    "link to a host repository",
    ".GIT folder",
]


@pytest.mark.parametrize("form", FORMS)
def test_a_nested_git_entry_is_data_and_its_files_are_diffed(
    sandbox: Sandbox, markers: Markers, host_repo: Path, form: str
) -> None:
    nested(sandbox, form, markers, host_repo)
    (sandbox.root / "pkg" / "calc.py").write_text(FIXED)
    assert_plain(sandbox.diff(), host_repo)
    assert markers.seen() == []


@pytest.mark.parametrize("form", ["commits and a hostile config", "gitdir: file"])
def test_a_git_entry_at_the_copy_root_is_data(
    sandbox: Sandbox, markers: Markers, host_repo: Path, form: str
) -> None:
    root = sandbox.root
    if form == "gitdir: file":
        (root / ".git").write_text(f"gitdir: {host_repo / '.git'}\n")
    else:
        git(root, "init", "--quiet", "--template=")
        # the copy belongs to the sandbox uid: git refuses it unless told it is safe
        git(root, "-c", "safe.directory=*", "add", "pkg")
        git(root, "-c", "safe.directory=*", "commit", "--quiet", "-m", "root")
        poison(root / ".git", markers, info_attributes=True)
    write_sub(sandbox)
    (root / "pkg" / "calc.py").write_text(FIXED)
    assert_plain(sandbox.diff(), host_repo)
    assert markers.seen() == []


def test_a_nested_repository_in_a_tracked_folder_keeps_its_changes(
    tmp_path: Path, markers: Markers, host_repo: Path
) -> None:
    tree = committed_tree(tmp_path / "tree")
    (tree / "sub").mkdir()
    (tree / "sub" / "kept.py").write_text("kept = 1\n")
    with Sandbox.create(tree, base_dir=tmp_path) as sb:
        nested(sb, "git init, no commit", markers, host_repo)
        (sb.root / "sub" / "kept.py").write_text("kept = 2\n")
        (sb.root / "pkg" / "calc.py").write_text(FIXED)
        diff = sb.diff()
    assert_plain(diff, host_repo)
    assert "-kept = 1\n+kept = 2\n" in diff
    assert markers.seen() == []


def test_the_copys_attributes_and_the_sandbox_home_configure_nothing(
    sandbox: Sandbox, markers: Markers, host_repo: Path
) -> None:
    """``-diff``, an encoding and HOME's git files, written by a test, leave the diff as it is."""
    (sandbox.root / ".gitattributes").write_text(
        "* -diff filter=evil\n*.py working-tree-encoding=UTF-16\n"
    )
    git_home = sandbox.base / "home" / ".config" / "git"
    git_home.mkdir(parents=True)
    (git_home / "attributes").write_text("* -diff\n")
    (git_home / "ignore").write_text("*\n")
    (git_home / "config").write_text(markers.filter_config())
    write_sub(sandbox)
    (sandbox.root / "pkg" / "calc.py").write_text(FIXED)
    diff = sandbox.diff()
    assert_plain(diff, host_repo)
    assert "GIT binary patch" not in diff and "Binary files" not in diff
    assert markers.seen() == []


def test_a_fifo_named_gitignore_does_not_hang_the_diff(sandbox: Sandbox, host_repo: Path) -> None:
    fifo = sandbox.root / "pkg" / ".gitignore"
    os.mkfifo(fifo)
    write_sub(sandbox)
    (sandbox.root / "pkg" / "calc.py").write_text(FIXED)
    try:
        with deadline(20):
            diff = sandbox.diff()
    finally:
        # a reader still blocked on the FIFO (the old diff) gets its end of file
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert_plain(diff, host_repo)


@NEEDS_NAMESPACES
async def test_a_contained_test_run_that_makes_nested_repositories(
    sandbox: Sandbox, host_repo: Path
) -> None:
    """The run itself, as the sandbox uid, writes the nested ``.git`` entries."""
    script = (
        "set -e; export HOME=$TMPDIR; mkdir sub empty; echo 'x = 1' > sub/x.py;"
        " git init -q sub; git init -q empty;"
        f" mkdir far; echo 'gitdir: {host_repo / '.git'}' > far/.git; echo 'y = 1' > far/y.py"
    )
    result = await sandbox.run(script)
    assert result.returncode == 0, result.stderr
    (sandbox.root / "pkg" / "calc.py").write_text(FIXED)
    diff = sandbox.diff()
    assert_plain(diff, host_repo)
    assert "diff --git a/far/y.py b/far/y.py\nnew file mode 100644\n" in diff
