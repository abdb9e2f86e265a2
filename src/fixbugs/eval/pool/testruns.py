"""Running a candidate case's test modules in the sandbox, and what each run said.

A pool case is kept only when its failing tests fail on the tree the agent
gets and pass with the real fix; that is measured here, by running each test
module the PR touches with ``pytest -v`` (every test's outcome by id), one
module per command so one slow module is named, in a sandbox copy of the tree
(the repository's code never runs on the host; no network).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbugs.pyenv.testoutput import Outcome, collect_error, parse_outcomes
from fixbugs.sandbox import CommandResult, Sandbox, WorkspaceFactory, interpreter_paths

__all__ = ["ModuleRun", "pytest_argv", "run_commands", "run_modules"]


@dataclass(frozen=True, slots=True)
class ModuleRun:
    """One test module's verbose run: each test's outcome, or why there are none."""

    module: str
    outcomes: Mapping[str, Outcome]
    collect_error: str | None  # the module did not import: its error's line
    timed_out: bool
    wall_s: float


async def run_commands(
    tree: Path,
    commands: Sequence[Sequence[str]],
    bin_dir: Path,
    *,
    timeout_s: float,
    workspace: WorkspaceFactory = Sandbox.create,
) -> list[CommandResult]:
    """Run ``commands`` one after the other in one sandbox copy of ``tree``; a command
    that runs out of time ends the series (its result is the last one)."""
    python = bin_dir / "python"
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    readonly = interpreter_paths(python)
    ws = await asyncio.to_thread(lambda: workspace(tree, readonly_paths=readonly))
    results: list[CommandResult] = []
    try:
        for argv in commands:
            res = await ws.run(list(argv), timeout_s=timeout_s, env=env)
            results.append(res)
            if res.timed_out:
                break
    finally:
        await asyncio.to_thread(ws.close)
    return results


def pytest_argv(bin_dir: Path, *targets: str) -> list[str]:
    return [str(bin_dir / "python"), "-m", "pytest", "-v", "-p", "no:cacheprovider", *targets]


async def run_modules(
    tree: Path,
    modules: Sequence[str],
    bin_dir: Path,
    *,
    timeout_s: float,
    workspace: WorkspaceFactory = Sandbox.create,
) -> list[ModuleRun]:
    """Each of ``modules`` run verbosely in one sandbox over ``tree``, in order; the
    series stops at the first module that runs out of time."""
    results = await run_commands(
        tree,
        [pytest_argv(bin_dir, "--tb=short", m) for m in modules],
        bin_dir,
        timeout_s=timeout_s,
        workspace=workspace,
    )
    return [
        ModuleRun(
            module,
            parse_outcomes(res.stdout),
            collect_error(res.stdout),
            res.timed_out,
            res.wall_s,
        )
        for module, res in zip(modules, results, strict=False)
    ]
