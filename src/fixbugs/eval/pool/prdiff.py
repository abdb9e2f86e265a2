"""A merged pull request's diff, split into its test changes and its source fix.

SWE-bench's instances name a base commit and the PR; the PR's own changes are
what its head adds since it left the base line: ``git diff base...head``
(from the merge base of ``base`` and the head), with ``head`` the merge
commit's second parent. A two-dot diff from ``base`` would also carry what
the master branch gained meanwhile. The test side is every changed file that
:func:`~fixbugs.index.paths.is_test_path` calls test code (``tests/``,
``testing/``, ``test_*.py``, ``conftest.py``); the gold fix is the diff
restricted to the manifest's gold files. The failing tests to check are the
test functions whose lines the test diff adds or changes, read with the
``ast`` of the new file.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from agentrt import parse_python
from fixbugs.diffs import FileDiff, split_git_diff
from fixbugs.index.paths import is_test_path
from fixbugs.sandbox.hosttools import git_env, run_tool

__all__ = [
    "PrPatches",
    "changed_tests",
    "pr_diff",
    "split_pr",
]

_GIT_TIMEOUT_S = 300.0


@dataclass(frozen=True, slots=True)
class PrPatches:
    """A PR's diff split: ``tests`` and ``gold`` are patches for ``git apply`` at the base."""

    tests: tuple[FileDiff, ...]
    gold: tuple[FileDiff, ...]
    dropped: tuple[str, ...]  # changed files neither test code nor gold (docs, .mailmap)

    @property
    def test_patch(self) -> str:
        return "".join(f.text for f in self.tests)

    @property
    def gold_patch(self) -> str:
        return "".join(f.text for f in self.gold)

    @property
    def test_files(self) -> tuple[str, ...]:
        """Test files present after the PR (a deleted one has nothing to put back)."""
        return tuple(f.path for f in self.tests if not f.deleted)


def pr_diff(git_dir: Path, base: str, merge: str) -> str:
    """``git diff base...merge^2``: the PR head's own changes (ValueError when it is no merge).

    ``--no-renames`` so each file's part names one path; ``--binary`` so the
    patch applies whole.
    """
    parents = _git(git_dir, "rev-list", "--parents", "-n", "1", merge).split()
    if len(parents) != 3:
        raise ValueError(f"{merge[:12]} is not a merge of two parents")
    return _git(
        git_dir,
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        "--binary",
        f"{base}...{parents[2]}",
    )


def _git(git_dir: Path, *args: str) -> str:
    done = run_tool(["git", f"--git-dir={git_dir}", *args], timeout_s=_GIT_TIMEOUT_S, env=git_env())
    if not done.ok:
        said = done.said().splitlines()
        raise ValueError(f"git {args[0]} failed: {said[-1] if said else 'no output'}")
    return done.stdout_text


def split_pr(diff: str, gold_files: Collection[str]) -> PrPatches:
    """Test parts, gold parts (files of ``gold_files``) and the names of the rest."""
    tests: list[FileDiff] = []
    gold: list[FileDiff] = []
    dropped: list[str] = []
    for part in split_git_diff(diff):
        if is_test_path(part.path):
            tests.append(part)
        elif part.path in gold_files:
            gold.append(part)
        else:
            dropped.append(part.path)
    return PrPatches(tuple(tests), tuple(gold), tuple(dropped))


def changed_tests(path: str, source: str, lines: Iterable[int]) -> list[str]:
    """pytest node ids (``path::test``, ``path::TestX::test``) of the test functions
    of ``source`` that hold one of ``lines`` (their decorators included)."""
    try:
        tree = parse_python(source)
    except SyntaxError:
        return []
    wanted = set(lines)
    ids: list[str] = []

    def span_hit(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        last = node.end_lineno or node.lineno
        return any(first <= n <= last for n in wanted)

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("test") and span_hit(node):
                ids.append(f"{path}::{node.name}")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for sub in node.body:
                if (
                    isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef)
                    and sub.name.startswith("test")
                    and span_hit(sub)
                ):
                    ids.append(f"{path}::{node.name}::{sub.name}")
    return ids
