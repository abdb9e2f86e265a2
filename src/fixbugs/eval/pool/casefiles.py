"""A pool case's files, written in the format of ``shared/bugs/README.md``.

The trees come out of a bare mirror with ``git archive`` (no work tree, no
hooks, none of the mirror's configuration runs: :func:`fixbugs.sandbox.hosttools.git_env`),
are packed with their files at the top of the archive, and the gold hunks
are read from the real fix by the one diff reader,
:func:`fixbugs.diffs.diff_hunks`.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from fixbugs.diffs import diff_files, diff_hunks
from fixbugs.errors import InputError
from fixbugs.sandbox.hosttools import git_env, run_tool

__all__ = [
    "VENVS",
    "CaseMeta",
    "GoldFile",
    "GoldHunk",
    "cut_output",
    "gold_of_patch",
    "has_commit",
    "pack_tree",
    "report_text",
    "tree_at",
    "write_json",
]

REPORT_LINES = 150
VENVS = "venvs"  # a built pool's folder of case venvs, as the builder installed them


def _git(mirror: Path, *args: str, timeout_s: float = 300) -> bytes:
    run = run_tool(["git", f"--git-dir={mirror}", *args], env=git_env(), timeout_s=timeout_s)
    if not run.ok:
        last = (run.said().splitlines() or ["failed"])[-1]
        raise InputError(f"git {args[0]} {args[-1]} in {mirror}: {last[:160]}")
    return run.stdout


def has_commit(mirror: Path, commit: str) -> bool:
    run = run_tool(
        ["git", f"--git-dir={mirror}", "cat-file", "-e", f"{commit}^{{commit}}"],
        env=git_env(),
        timeout_s=60,
    )
    return run.ok


def tree_at(
    mirror: Path,
    commit: str,
    dest: Path,
    *,
    overlay_from: str | None = None,
    overlay: Sequence[str] = (),
) -> None:
    """``commit``'s tree in ``dest``; with ``overlay_from``, the files ``overlay`` as that
    commit has them (the fixed commit's tests over the buggy tree)."""
    archive = _git(mirror, "archive", "--format=tar", commit)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(dest, filter="data")
    for path in overlay:
        text = _git(mirror, "show", f"{overlay_from}:{path}")
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text)


def pack_tree(root: Path, archive: Path) -> None:
    """``root``'s files into ``archive`` (gzip), at the top, sorted, links kept as links."""
    with tarfile.open(archive, "w:gz") as tar:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                full = Path(dirpath) / name
                tar.add(full, arcname=str(full.relative_to(root)), recursive=False)


@dataclass(frozen=True, slots=True)
class GoldHunk:
    file: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class GoldFile:
    """``gold.json``: the answer, which only the scorer reads."""

    files: tuple[str, ...]
    hunks: tuple[GoldHunk, ...]
    patch: str


@dataclass(frozen=True, slots=True)
class CaseMeta:
    """``case.json`` of a pool case (``shared/bugs/README.md``, plus where it came from)."""

    id: str
    project: str
    python: str
    buggy_commit: str
    fixed_commit: str
    failing_tests: tuple[str, ...]
    test_files: tuple[str, ...]
    test_command: str
    requirements: tuple[str, ...]
    requirements_dropped: tuple[str, ...]  # BugsInPy's pins that do not install, and why
    pass_to_pass: tuple[str, ...]
    source: str
    has_issue: bool = False
    install_no_deps: bool = False  # the pins installed as frozen (pip --no-deps)


def gold_of_patch(patch: str) -> tuple[tuple[str, ...], tuple[GoldHunk, ...]]:
    """The files a real fix changes and its hunks as the case format has them: the buggy
    lines each block removes or rewrites; for a pure insertion, the two lines around it."""
    files = tuple(diff_files(patch))
    hunks = tuple(
        GoldHunk(h.path, min(h.start, h.end), max(h.start, h.end))
        for h in diff_hunks(patch)
        if h.path != "/dev/null"
    )
    return files, hunks


def cut_output(output: str, rewrites: Sequence[tuple[str, str]], limit: int = REPORT_LINES) -> str:
    """A run's output with host paths rewritten, cut to its last ``limit`` lines."""
    for host, shown in sorted(rewrites, key=lambda r: -len(r[0])):
        if host:
            output = output.replace(host, shown)
    lines = output.rstrip().splitlines()
    return "\n".join(lines[-limit:])


def report_text(failing: Sequence[str], command: str, output: str, python: str) -> str:
    """The report the agent gets, as the shared cases have it."""
    title = failing[0] + (f" (and {len(failing) - 1} more)" if len(failing) > 1 else "")
    return (
        f"# {title} fails\n\nThis test fails.\n\n## How to reproduce\n\n"
        f"From the repository root, with Python {python} and the test requirements installed:\n\n"
        f"```\n{command}\n```\n\n## Output\n\n```\n{output}\n```\n"
    )


def write_json(path: Path, data: CaseMeta | GoldFile | dict[str, object]) -> None:
    """``data`` as indented JSON (a dataclass as its fields)."""
    plain = data if isinstance(data, dict) else asdict(data)
    path.write_text(json.dumps(plain, indent=2) + "\n")
