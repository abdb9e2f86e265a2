"""The one patch applier: git apply, else patch -p1 dry-run first, and a failed patch put back."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

from fixbugs.diffs import touched_files
from fixbugs.inputs.hostgit import apply_diff
from fixbugs.sandbox.hosttools import ToolRun, run_tool
from fixbugs.sandbox.patching import ToolRunner, apply_patch

FIX = textwrap.dedent(
    """\
    --- a/pkg/calc.py
    +++ b/pkg/calc.py
    @@ -1,2 +1,2 @@
     def add(a, b):
    -    return a - b
    +    return a + b
    """
)
HALF_GOOD = FIX + textwrap.dedent(
    """\
    --- a/test_calc.py
    +++ b/test_calc.py
    @@ -1,1 +1,1 @@
    -this line is not in the file
    +whatever
    """
)
BUGGY = "def add(a, b):\n    return a - b\n"


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "calc.py").write_text(BUGGY)
    (root / "test_calc.py").write_text("from pkg.calc import add\n")
    return root


def _host(root: Path, log: list[tuple[str, ...]]) -> ToolRunner:
    def run(argv: Sequence[str], stdin: bytes) -> ToolRun:
        log.append(tuple(argv))
        if argv[0] == "git":  # as if git apply refused: the fallback's turn
            return ToolRun(tuple(argv), 1, b"", b"error: refused")
        return run_tool(argv, stdin=stdin, cwd=root, timeout_s=60)

    return run


def test_patch_is_the_fallback_and_is_dry_run_first(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    log: list[tuple[str, ...]] = []
    result = apply_patch(FIX, root, _host(root, log))
    assert result.applied and result.tool == "patch -p1" and result.files == ("pkg/calc.py",)
    assert (root / "pkg" / "calc.py").read_text() == BUGGY.replace("-", "+")
    assert [a[:2] for a in log] == [("git", "apply"), ("patch", "-p1"), ("patch", "-p1")]
    assert "--dry-run" in log[1] and "--dry-run" not in log[2]


def test_a_failed_patch_is_put_back(tmp_path: Path) -> None:
    """patch(1) writes some files before it fails; every path the diff names is restored."""
    root = _tree(tmp_path)
    new = "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+x = 1\n"

    def run(argv: Sequence[str], stdin: bytes) -> ToolRun:
        if argv[0] == "git" or "--dry-run" in argv:
            return ToolRun(tuple(argv), int(argv[0] == "git"), b"", b"")
        (root / "pkg" / "calc.py").write_text("half written\n")
        (root / "pkg" / "new.py").write_text("x = 1\n")
        return ToolRun(tuple(argv), 1, b"1 out of 1 hunk FAILED", b"")

    result = apply_patch(FIX + new, root, run)
    assert not result.applied and "hunk FAILED" in result.message
    assert (root / "pkg" / "calc.py").read_text() == BUGGY
    assert not (root / "pkg" / "new.py").exists()


def test_an_empty_patch_runs_nothing(tmp_path: Path) -> None:
    def run(argv: Sequence[str], stdin: bytes) -> ToolRun:
        raise AssertionError("no tool runs for an empty patch")

    assert apply_patch("  \n", tmp_path, run).message.startswith("the patch is empty")
    assert touched_files(FIX + "--- /dev/null\n+++ b/new.py\n") == ("pkg/calc.py", "new.py")


def test_on_the_host_a_patch_that_half_applies_writes_nothing(tmp_path: Path) -> None:
    """``--apply`` and the scorer: patch(1) after git apply fails writes no half of a diff."""
    root = _tree(tmp_path)
    result = apply_diff(HALF_GOOD, root)
    assert not result.applied and "git apply" in result.message
    assert (root / "pkg" / "calc.py").read_text() == BUGGY
    assert sorted(p.name for p in root.rglob("*") if p.is_file()) == ["calc.py", "test_calc.py"]


@pytest.mark.parametrize("diff", [FIX, FIX.rstrip("\n")])
def test_on_the_host_a_good_patch_applies(tmp_path: Path, diff: str) -> None:
    root = _tree(tmp_path)
    result = apply_diff(diff, root)
    assert result.applied and result.tool == "git apply"
    assert (root / "pkg" / "calc.py").read_text() == BUGGY.replace("-", "+")
