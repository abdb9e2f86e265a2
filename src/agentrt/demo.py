"""`agentrt demo`: a small scatter-gather on the embedded model.

Map: the bundled incident log is chunked greedily by lines and each chunk is
summarized by its own call (internal stage, not streamed). Reduce: one
judgment call over the summaries, streamed to the terminal because a person
watches it. Then every call's metrics and the per-stage aggregates.
"""

from __future__ import annotations

import asyncio
import importlib.resources
from pathlib import Path

from rich.console import Console

from agentrt.clock import SystemClock
from agentrt.config import load_settings
from agentrt.llm.client import ModelClient
from agentrt.llm.factory import client_for_role
from agentrt.llm.types import ChatRequest, Completed, TextDelta
from agentrt.metrics.recorder import MetricsRecorder, stage
from agentrt.metrics.table import calls_table, stages_table
from agentrt.tokens.counting import estimate_tokens

__all__ = ["chunk_lines", "demo_log", "run_demo"]

MAP_SYSTEM = "You read service logs. Answer in one short sentence."
REDUCE_SYSTEM = "You are an incident analyst. Be brief and concrete."


def demo_log() -> str:
    return (importlib.resources.files("agentrt") / "data" / "demo_incident.log").read_text()


def chunk_lines(text: str, parts: int) -> list[str]:
    """Greedy line packing into about ``parts`` chunks of similar token size."""
    lines = text.splitlines(keepends=True)
    budget = max(1, -(-estimate_tokens(text) // max(1, parts)))
    chunks: list[str] = []
    cur: list[str] = []
    size = 0
    for line in lines:
        n = estimate_tokens(line)
        if cur and size + n > budget:
            chunks.append("".join(cur))
            cur, size = [], 0
        cur.append(line)
        size += n
    if cur:
        chunks.append("".join(cur))
    return chunks


async def _map_one(model: ModelClient, i: int, chunk: str) -> str:
    req = ChatRequest.of(
        f"Log lines:\n{chunk}\nWhat goes wrong in these lines, if anything?",
        system=MAP_SYSTEM,
        max_tokens=48,
        stage="map",
    )
    result = await model.complete(req)
    return f"[chunk {i + 1}] {result.text.strip()}"


async def run_demo(
    console: Console,
    *,
    json_path: Path | None = None,
    config: Path | None = None,
    chunks: int = 4,
) -> MetricsRecorder:
    settings = load_settings(config)
    ep_name, ep = settings.endpoint_for("default")
    recorder = MetricsRecorder(SystemClock())
    model = client_for_role(settings, "default", recorder=recorder)
    pieces = chunk_lines(demo_log(), chunks)
    console.print(
        f"[bold]agentrt demo[/]: scatter-gather over {len(pieces)} log chunks on "
        f"endpoint [cyan]{ep_name}[/] ({ep.kind}, model {ep.model})"
    )
    try:
        with recorder.activate():
            with stage("map"):
                async with asyncio.TaskGroup() as tg:
                    tasks = [tg.create_task(_map_one(model, i, c)) for i, c in enumerate(pieces)]
            summaries = [t.result() for t in tasks]
            for s in summaries:
                console.print(f"  {s}")
            req = ChatRequest.of(
                "Summaries of log chunks from one incident, in time order:\n"
                + "\n".join(summaries)
                + "\nWhat is the most likely root cause? One or two sentences.",
                system=REDUCE_SYSTEM,
                max_tokens=96,
                stage="reduce",
            )
            console.print("[bold]judgment (streamed):[/] ", end="")
            async for ev in model.stream(req):
                if isinstance(ev, TextDelta):
                    console.print(ev.text, end="", markup=False, highlight=False)
                elif isinstance(ev, Completed):
                    console.print()
    finally:
        await model.aclose()
    console.print(calls_table(recorder.records))
    console.print(stages_table(recorder.by_stage()))
    if json_path:
        recorder.write_json(json_path)
        console.print(f"metrics written to {json_path}")
    return recorder
