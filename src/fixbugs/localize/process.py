"""Run one command in a tree: the seam where :class:`fixbugs.sandbox.Sandbox` plugs in.

Localization and evaluation run tests (under coverage, or to confirm a
failure) in a throwaway copy of the repository. This is the one function
that does so: an asyncio subprocess in its own process group, killed as a
group at the time limit, its output capped. Swapping in ``Sandbox.run``
(containment: unprivileged uid, no network) changes only this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CommandRun", "run_command"]


@dataclass(frozen=True, slots=True)
class CommandRun:
    argv: tuple[str, ...]
    returncode: int | None  # None when killed at the time limit
    output: str  # stdout and stderr, interleaved, capped
    timed_out: bool


async def run_command(
    argv: Sequence[str],
    cwd: Path,
    *,
    timeout_s: float = 120.0,
    env: Mapping[str, str] | None = None,
    max_output_bytes: int = 2_000_000,
) -> CommandRun:
    full_env = {**os.environ, **(env or {})}
    full_env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(cwd),
        env=full_env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,  # its own process group, so the kill reaches children
    )
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0

    async def drain() -> None:
        nonlocal size
        assert proc.stdout is not None
        while data := await proc.stdout.read(65536):
            if size < max_output_bytes:
                chunks.append(data[: max_output_bytes - size])
            size += len(data)
        await proc.wait()

    timed_out = False
    try:
        await asyncio.wait_for(drain(), timeout_s)
    except TimeoutError:
        timed_out = True
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
    text = b"".join(chunks).decode("utf-8", "replace")
    if size > max_output_bytes:
        text += f"\n[output truncated at {max_output_bytes} bytes]"
    return CommandRun(tuple(argv), None if timed_out else proc.returncode, text, timed_out)
