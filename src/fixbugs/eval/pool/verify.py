"""A pool case checked in its venv, in the sandbox, with no network: is it a real case?

A case counts only when its failing tests fail on the buggy tree for the
code's sake (not for a missing module, a network call or a home folder:
:func:`fixbugs.pyenv.failures.environment_signature`, the one judge of
that) and pass once the real fix is applied. The tests of ``test_files``
that pass both before and after are the case's ``pass_to_pass``. The run
on the buggy tree is also the report's output. Every command runs in a
:class:`~fixbugs.sandbox.Sandbox` copy (loopback only), as the scorer's do.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fixbugs.eval.as_user import _shows_failing
from fixbugs.pyenv.failures import environment_signature
from fixbugs.pyenv.testid import TestId
from fixbugs.pyenv.testoutput import failures, parse_outcomes
from fixbugs.pyenv.testrun import parse_test_command
from fixbugs.sandbox import Sandbox, WorkspaceFactory, interpreter_paths

__all__ = ["Checked", "check_case"]


@dataclass(frozen=True, slots=True)
class Checked:
    """A case that holds (``skipped`` None), or why it does not, in one line."""

    output: str = ""  # the failing run on the buggy tree, as printed (host paths)
    paths: tuple[tuple[str, str], ...] = ()  # host paths in ``output`` → what a user's read
    pass_to_pass: tuple[str, ...] = ()
    skipped: str | None = None


def _verbose(python: Path, test_files: Sequence[str]) -> list[str]:
    return [str(python), "-m", "pytest", "-v", "-p", "no:cacheprovider", *test_files]


async def check_case(
    tree: Path,
    python_bin: Path,
    *,
    test_command: str,
    failing: Sequence[str],
    test_files: Sequence[str],
    gold_patch: str,
    project: str,
    timeout_s: float = 300.0,
    workspace: WorkspaceFactory = Sandbox.create,
) -> Checked:
    """Run ``failing`` on ``tree`` and on ``tree`` + ``gold_patch``; :class:`Checked` says."""
    python = python_bin / "python"
    env = {"PATH": f"{python_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
    readonly = interpreter_paths(python)
    ws = await asyncio.to_thread(lambda: workspace(tree, readonly_paths=readonly))
    try:
        argv = parse_test_command(test_command).with_python(python)
        plain = await ws.run(argv, timeout_s=timeout_s, env=env)
        output = plain.stdout + plain.stderr
        if plain.ok:
            return Checked(skipped="the failing tests pass on the buggy tree")
        if plain.timed_out:
            return Checked(skipped=f"the failing tests ran past {timeout_s:g} s on the buggy tree")
        sigs = [environment_signature(f.text) for f in failures("pytest", output)]
        if sigs and all(sigs):
            return Checked(skipped=f"the failing tests fail for the environment: {sigs[0]}")
        verbose = await ws.run(_verbose(python, test_files), timeout_s=timeout_s, env=env)
        if verbose.timed_out:  # the scorer runs these files for every patch: they must end
            return Checked(skipped=f"the test files run past {timeout_s:g} s on the buggy tree")
        before = parse_outcomes(verbose.stdout)
        quiet = [t for t in failing if not _shows_failing(t, before)]
        if quiet:
            return Checked(skipped=f"{quiet[0]} does not fail on the buggy tree (verbose run)")
        fixed = await asyncio.to_thread(ws.fork)
        try:
            applied = await asyncio.to_thread(fixed.apply_patch, gold_patch)
            if not applied.applied:
                return Checked(skipped="the real fix does not apply over the fixed tests")
            run = await fixed.run(_verbose(python, test_files), timeout_s=timeout_s, env=env)
            after = parse_outcomes(run.stdout)
        finally:
            await asyncio.to_thread(fixed.close)
        for t in failing:
            got = [o for i, o in after.items() if TestId.parse(i).within(TestId.parse(t))]
            if not got or any(o != "passed" for o in got):
                return Checked(skipped=f"{t} does not pass with the real fix ({got or 'not run'})")
        paths = (
            (str(ws.root), f"/home/user/{project}"),
            (str(tree), f"/home/user/{project}"),
            (str(python_bin.parent), "/home/user/venv"),
            *((str(p), "/usr") for p in readonly if p != python_bin.parent),
        )
        named = set(failing)
        p2p = tuple(
            sorted(
                t
                for t, o in after.items()
                if o == "passed"
                and before.get(t) == "passed"
                and t not in named
                and t.split("[", 1)[0] not in named
            )
        )
        return Checked(output, paths, p2p)
    finally:
        await asyncio.to_thread(ws.close)
