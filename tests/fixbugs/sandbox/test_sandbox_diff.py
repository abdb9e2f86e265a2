"""The sandbox's diff of real changes is what ``git add -A`` and ``git diff --cached`` gave.

:mod:`fixbugs.sandbox.snapshot` writes the copy's trees itself (git no longer
walks the copy); for a copy with no ``.git`` entry and no attributes, the
diff must be byte for byte the one the old ``git add -A`` produced: edits,
deletions, renames, new files, binary files, modes, links, odd names, and
git's ignore rules (``.gitignore`` files at any depth, negation, tracked
files under a folder that became ignored, our exclude of caches).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from fixbugs.sandbox import Sandbox

BINARY = bytes(range(256)) * 8


def build(root: Path) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/calc.py": "def add(a, b):\n    return a - b\n",
        "pkg/gone.py": "gone = True\n",
        "pkg/moved.py": "".join(f"line {i}\n" for i in range(40)),
        "pkg/deep/er/mod.py": "x = 1\n",
        "run.sh": "#!/bin/sh\necho run\n",
        "dist/kept.txt": "tracked under a folder a test will ignore\n",
        "naïve name.txt": "unicode\n",
        # git orders a tree's entries with a folder's name as if it ended in "/"
        "pkg-notes.txt": "before pkg/ in git's order\n",
        "pkg.txt": "before pkg/ too\n",
        "data/.gitignore": "*.tmp\n!keep.tmp\n",
        ".gitignore": "build/\n*.log\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "data" / "blob.bin").write_bytes(BINARY)
    os.symlink("pkg/calc.py", root / "alias.py")


def change(root: Path) -> None:
    (root / "pkg" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "pkg" / "gone.py").unlink()
    (root / "pkg" / "moved.py").rename(root / "pkg" / "renamed.py")
    (root / "pkg" / "deep" / "er" / "new.py").write_text("y = 2\n")
    (root / "pkg.txt").write_text("changed\n")
    (root / "pkg0").write_text("after pkg/\n")
    (root / "run.sh").chmod(0o755)
    (root / "data" / "blob.bin").write_bytes(BINARY[::-1])
    (root / "alias.py").unlink()
    os.symlink("pkg/__init__.py", root / "alias.py")
    os.symlink("../pkg", root / "data" / "link")
    (root / "new dir" / "only" / "sub").mkdir(parents=True)
    (root / "new dir" / "only" / "sub" / "f.txt").write_text("nested new\n")
    (root / "empty" / "folder").mkdir(parents=True)
    (root / "line\nbreak.txt").write_text("odd name\n")
    # ignored: by the top .gitignore, data/.gitignore, our exclude of caches
    (root / "build").mkdir()
    (root / "build" / "out.o").write_text("object\n")
    (root / "run.log").write_text("log\n")
    (root / "data" / "x.tmp").write_text("tmp\n")
    (root / "data" / "keep.tmp").write_text("kept by negation\n")
    (root / "pkg" / "__pycache__").mkdir()
    (root / "pkg" / "__pycache__" / "calc.cpython-311.pyc").write_bytes(b"\0pyc")
    # a folder with tracked files becomes ignored: tracked files still count, new ones not
    (root / ".gitignore").write_text("build/\n*.log\ndist/\n")
    (root / "dist" / "kept.txt").write_text("changed anyway\n")
    (root / "dist" / "new.txt").write_text("ignored\n")


def old_diff(pristine: Path, copy: Path, git_dir: Path) -> str:
    """What the sandbox did before: ``git add -A`` of the baseline, then of the copy."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(git_dir.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }

    def git(tree: Path, *args: str) -> bytes:
        argv = [
            "git", f"--git-dir={git_dir}", f"--work-tree={tree}", "-c", "safe.directory=*",
            "-c", "core.autocrlf=false", "-c", "user.name=t", "-c", "user.email=t@t", *args,
        ]  # fmt: skip
        return subprocess.run(argv, cwd=tree, env=env, capture_output=True, check=True).stdout

    git(pristine, "init", "--quiet")
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "exclude").write_text(
        "__pycache__/\n*.pyc\n.pytest_cache/\n.mypy_cache/\n.ruff_cache/\n.coverage\n"
    )
    git(pristine, "add", "-A", ".")
    git(pristine, "commit", "--quiet", "--allow-empty", "--no-verify", "-m", "baseline")
    git(copy, "add", "-A", ".")
    return git(copy, "diff", "--cached", "--no-color", "--no-ext-diff", "--binary", "HEAD").decode(
        "utf-8", errors="replace"
    )


def test_the_diff_of_real_changes_is_the_one_git_add_gave(tmp_path: Path) -> None:
    build(tmp_path / "orig")
    with Sandbox.create(tmp_path / "orig", base_dir=tmp_path) as sb:
        assert sb.diff() == ""
        change(sb.root)
        diff = sb.diff()
        assert diff == old_diff(sb.baseline, sb.root, tmp_path / "reference.git")
        assert sb.diff() == diff  # a second diff sees the same
        with sb.fork() as fork:
            assert fork.diff() == ""
    for shown in ("+    return a + b", "rename to pkg/renamed.py", "GIT binary patch"):
        assert shown in diff
    assert "new mode 100755" in diff and "b/new dir/only/sub/f.txt" in diff
    assert "data/keep.tmp" in diff and "changed anyway" in diff
    for hidden in ("out.o", "run.log", "x.tmp", "__pycache__", "dist/new.txt", "empty"):
        assert hidden not in diff


def objects(git_dir: Path) -> set[str]:
    """The loose objects a store holds itself (not those it reads through alternates)."""
    folder = git_dir / "objects"
    return {f"{d.name}{f.name}" for d in folder.iterdir() if len(d.name) == 2 for f in d.iterdir()}


def test_a_fork_reads_the_baseline_objects_in_place_and_diffs_the_same(tmp_path: Path) -> None:
    build(tmp_path / "orig")
    with Sandbox.create(tmp_path / "orig", base_dir=tmp_path) as reference:
        change(reference.root)
        expected = reference.diff()
    with Sandbox.create(tmp_path / "orig", base_dir=tmp_path) as sb:
        baseline_objects = objects(sb.base / "baseline.git")
        with sb.fork() as fork:
            store = fork.base / "baseline.git"
            assert objects(store) == set()  # nothing copied: the baseline is read in place
            change(fork.root)
            assert fork.diff() == expected
            added = objects(store)
            # only what the change adds, and none of the baseline's (calc.py's old text)
            assert added and not added & baseline_objects
            with fork.fork() as second:  # a fork of a fork reads the first baseline too
                alternates = second.base / "baseline.git" / "objects" / "info" / "alternates"
                assert alternates.read_text() == f"{sb.base / 'baseline.git' / 'objects'}\n"
                change(second.root)
                assert second.diff() == expected


def test_an_empty_copy_and_a_copy_emptied_by_a_test(tmp_path: Path) -> None:
    (tmp_path / "orig").mkdir()
    with Sandbox.create(tmp_path / "orig", base_dir=tmp_path) as sb:
        assert sb.diff() == ""
        (sb.root / "a.txt").write_text("a\n")
        assert "+a\n" in sb.diff()
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "a.txt").write_text("a\n")
    with Sandbox.create(tmp_path / "one", base_dir=tmp_path) as sb:
        (sb.root / "a.txt").unlink()
        assert "deleted file mode 100644" in sb.diff()
