"""Run the provider simulator as a real server in a child process.

Benchmarks that measure a client should pay what a client pays — HTTP over
loopback, a server in another process — so they start `agentrt sim serve`
rather than talking to the app in-process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import httpx

from agentrt._clock import Clock
from agentrt._errors import UserError
from agentrt.llm._openai_backend import OpenAIModel
from agentrt.llm._types import ChatRequest
from agentrt.metrics._recorder import MetricsRecorder

__all__ = ["free_port", "running_simulator", "simulated_model"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def running_simulator(
    profile: str = "default",
    *,
    time_scale: float | None = None,
    overrides: Mapping[str, object] | None = None,
    startup_timeout_s: float = 30.0,
) -> AsyncIterator[str]:
    """Start a simulator server; yield its ``/v1`` base URL; stop it after."""
    port = free_port()
    args = [sys.executable, "-m", "agentrt", "sim", "serve", "--port", str(port)]
    with tempfile.TemporaryDirectory() as tmp:
        if overrides:
            from agentrt.sim import get_profile

            prof = get_profile(profile, **overrides)
            path = Path(tmp) / "profile.json"
            path.write_text(json.dumps(prof.model_dump(mode="json")))
            args += ["--profile-file", str(path)]
        else:
            args += ["--profile", profile]
        if time_scale is not None:
            args += ["--time-scale", str(time_scale)]
        errlog = Path(tmp) / "stderr.log"
        with errlog.open("wb") as err:
            proc = await asyncio.create_subprocess_exec(
                *args, stdout=asyncio.subprocess.DEVNULL, stderr=err
            )
        base = f"http://127.0.0.1:{port}/v1"
        try:
            await _wait_ready(base, proc, errlog, startup_timeout_s)
            yield base
        finally:
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


@contextlib.asynccontextmanager
async def simulated_model(
    clock: Clock,
    profile: str = "default",
    *,
    time_scale: float,
    overrides: Mapping[str, object] | None = None,
    recorder: MetricsRecorder | None = None,
) -> AsyncIterator[OpenAIModel]:
    """A client of a fresh simulator server, its connection warmed up by one small call."""
    async with running_simulator(profile, time_scale=time_scale, overrides=overrides) as url:
        client = OpenAIModel(model="sim-model", base_url=url, clock=clock, recorder=recorder)
        try:
            await client.complete(ChatRequest.of("warm up", max_tokens=2))
            yield client
        finally:
            await client.aclose()


async def _wait_ready(
    base: str, proc: asyncio.subprocess.Process, errlog: Path, timeout_s: float
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    async with httpx.AsyncClient() as http:
        while loop.time() < deadline:
            if proc.returncode is not None:
                text = await asyncio.to_thread(errlog.read_text, errors="replace")
                last = text.strip().splitlines()[-1:] or ["no output"]
                raise UserError(f"simulator exited at start: {last[0]}")
            try:
                r = await http.get(base + "/models", timeout=1.0)
                if r.status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.05)  # polling a child process's start-up
    raise UserError(f"simulator did not start within {timeout_s:g} s")
