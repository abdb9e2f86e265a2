"""SBFL of a reproduction, run in a throwaway fork so the workspace's tree stays pristine."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from fixbugs.localize.sbfl import SbflResult, run_sbfl
from fixbugs.run.context import RunContext
from fixbugs.sandbox.executor import Workspace

__all__ = ["sbfl_in_fork"]


async def sbfl_in_fork(
    ctx: RunContext,
    workspace: Workspace,
    python: Path,
    tests: Sequence[str],
    *,
    what: str,
    write_first: Callable[[Path], str] | None = None,
) -> SbflResult:
    """:func:`run_sbfl` over ``tests`` in a fork of ``workspace``, recorded as ``what``.

    ``write_first(fork_root)`` writes one more test file into the fork (the
    report's snippet as a test) and names it; it runs first.
    """
    fork = await asyncio.to_thread(workspace.fork)
    try:
        files = list(tests)
        if write_first is not None:
            files.insert(0, await asyncio.to_thread(write_first, fork.root))
        with ctx.recorder.tool_call(what):
            return await run_sbfl(
                fork,
                python,
                files,
                timeout_s=ctx.options.test_timeout_s,
                env=ctx.options.test_env,
                baseline=fork.baseline,
                listed=ctx.files().keys(),
            )
    finally:
        await asyncio.to_thread(fork.close)
