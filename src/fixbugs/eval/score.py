"""The scorer: the only code that reads a case's ``gold.json``.

It judges what the agent produced, exactly as the cases' README (Scoring)
says: localization hits at 1/3/5 against the gold files (plus line-range
overlap with the gold hunks), and validation of a patch redone from scratch
— apply to a fresh extraction, put the original test files back, then
fail-to-pass (the test command exits 0, nothing fails or errors) and
pass-to-pass (every listed id shows PASSED). ``validated`` is true only when
both checks ran and held.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbugs.eval.archive import extract_tree
from fixbugs.inputs.hostgit import apply_diff
from fixbugs.pyenv.testoutput import parse_outcomes
from fixbugs.pyenv.testrun import parse_test_command
from fixbugs.sandbox import Sandbox, WorkspaceFactory, interpreter_paths

__all__ = [
    "MAX_REGION_WIDTH",
    "Gold",
    "LocalizationScore",
    "ValidationScore",
    "load_gold",
    "region_hit",
    "score_localization",
    "validate_patch",
]


@dataclass(frozen=True, slots=True)
class Gold:
    files: frozenset[str]
    hunks: tuple[tuple[str, int, int], ...]
    patch: str


@dataclass(frozen=True, slots=True)
class LocalizationScore:
    top1: bool
    top3: bool
    top5: bool
    rank: int | None  # 1-based rank of the first gold file, None when absent
    line_hit: bool  # a predicted range overlaps a gold hunk in the same file


@dataclass(frozen=True, slots=True)
class ValidationScore:
    validated: bool
    applied: bool
    fail_to_pass: bool
    pass_to_pass: bool
    detail: str


def load_gold(case_dir: Path) -> Gold:
    data = json.loads((case_dir / "gold.json").read_text())
    hunks = tuple((h["file"], int(h["start"]), int(h["end"])) for h in data.get("hunks", []))
    return Gold(frozenset(_norm(f) for f in data["files"]), hunks, data.get("patch", ""))


def _norm(path: str) -> str:
    return path.strip().removeprefix("./")


def score_localization(
    ranked: Sequence[str],
    gold: Gold,
    lines: Mapping[str, Sequence[tuple[int, int]]] | None = None,
) -> LocalizationScore:
    paths = [_norm(p) for p in ranked]
    rank = next((i + 1 for i, p in enumerate(paths) if p in gold.files), None)
    line_hit = any(
        a <= end and start <= b
        for path, ranges in (lines or {}).items()
        for a, b in ranges
        for file, start, end in gold.hunks
        if _norm(path) == file
    )
    return LocalizationScore(
        rank == 1, rank is not None and rank <= 3, rank is not None and rank <= 5, rank, line_hit
    )


MAX_REGION_WIDTH = 20  # a wider root cause says "somewhere in here", which earns nothing


def region_hit(
    root_cause: tuple[str, int, int] | None,
    gold: Gold,
    *,
    slack: int = 3,
    max_width: int = MAX_REGION_WIDTH,
) -> bool:
    """The root-cause region is in a gold file, at most ``max_width`` lines wide, and its
    lines are within ``slack`` of a gold hunk."""
    if root_cause is None:
        return False
    path, start, end = root_cause
    if end - start + 1 > max_width:
        return False
    path = _norm(path)
    return any(
        path == file and start <= h_end + slack and h_start - slack <= end
        for file, h_start, h_end in gold.hunks
    )


async def validate_patch(
    case_dir: Path,
    patch: str | None,
    python_bin: Path,
    *,
    timeout_s: float = 300.0,
    workspace: WorkspaceFactory = Sandbox.create,
) -> ValidationScore:
    """Redo validation from scratch in a fresh extraction (README, Scoring).

    The patch is applied on the host as :func:`fixbugs.inputs.hostgit.apply_diff`
    applies one (none of the tree's git configuration runs); the tests run
    in ``workspace``'s copy of the tree (the sandbox), never on the host.
    """
    if not patch or not patch.strip():
        return ValidationScore(False, False, False, False, "no patch")
    case = json.loads((case_dir / "case.json").read_text())
    with tempfile.TemporaryDirectory(prefix="fixbugs-score-") as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        extract_tree(case_dir / "repo.tar.gz", root)
        applied = await asyncio.to_thread(apply_diff, patch, root)
        if not applied.applied:
            return ValidationScore(False, False, False, False, "patch does not apply")
        extract_tree(case_dir / "repo.tar.gz", root, only=case.get("test_files", []))
        python = python_bin / "python"
        env = {"PATH": f"{python_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
        argv = parse_test_command(case["test_command"]).with_python(python)
        verbose = [str(python), "-m", "pytest", "-v", "-p", "no:cacheprovider"]
        verbose += case.get("test_files", [])
        readonly = interpreter_paths(python)
        ws = await asyncio.to_thread(lambda: workspace(root, readonly_paths=readonly))
        try:
            f2p = await ws.run(argv, timeout_s=timeout_s, env=env)
            p2p = await ws.run(verbose, timeout_s=timeout_s, env=env)
        finally:
            await asyncio.to_thread(ws.close)
    f2p_out = f2p.stdout + f2p.stderr
    f2p_ok = (
        f2p.returncode == 0
        and not f2p.timed_out
        and " failed" not in _last_line(f2p_out)
        and (" error" not in _last_line(f2p_out))
    )
    outcomes = parse_outcomes(p2p.stdout + p2p.stderr)
    passed = {t for t, o in outcomes.items() if o == "passed"}
    missing = [t for t in case.get("pass_to_pass", []) if t not in passed]
    p2p_ok = not missing
    # the case's own tests, not FixBugs' verdict (a `passes tests` lead can pass them too)
    detail = (
        "the case's tests pass"
        if f2p_ok and p2p_ok
        else (
            "fail-to-pass still fails" if not f2p_ok else f"{len(missing)} pass-to-pass tests broke"
        )
    )
    return ValidationScore(f2p_ok and p2p_ok, True, f2p_ok, p2p_ok, detail)


def _last_line(output: str) -> str:
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else ""
