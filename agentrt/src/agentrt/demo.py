"""`agentrt demo`: a small scatter-gather on the embedded model.

Map: the bundled incident log is chunked greedily by lines and each chunk is
summarized by its own call (internal stage, not streamed). Reduce: one
judgment call over the summaries, streamed to the terminal because a person
watches it. Then every call's metrics and the per-stage aggregates.
"""

from __future__ import annotations

import importlib.resources
import io
from pathlib import Path

from rich.console import Console

from agentrt.chunking import chunk_log
from agentrt.clock import SystemClock
from agentrt.config import load_settings
from agentrt.flow.clients import client_for_role
from agentrt.graph import gather_map
from agentrt.llm.protocol import ChatModel
from agentrt.llm.types import ChatRequest, Completed, TextDelta
from agentrt.metrics.recorder import MetricsRecorder, stage
from agentrt.metrics.table import calls_table, stages_table
from agentrt.tokens.counting import estimate_tokens

__all__ = ["demo_log", "log_chunks", "run_demo"]

MAP_SYSTEM = "You read service logs. Answer in one short sentence."
REDUCE_SYSTEM = "You are an incident analyst. Be brief and concrete."


def demo_log() -> str:
    return (importlib.resources.files("agentrt") / "data" / "demo_incident.log").read_text()


def log_chunks(text: str, parts: int) -> list[str]:
    """The log chunked greedily by lines (:func:`agentrt.chunking.chunk_log`),
    with a token budget that gives about ``parts`` chunks."""
    budget = max(1, -(-estimate_tokens(text) // max(1, parts)))
    return [c.text for c in chunk_log(io.BytesIO(text.encode()), budget, source="demo")]


async def _map_one(model: ChatModel, i: int, chunk: str) -> str:
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
    pieces = log_chunks(demo_log(), chunks)
    console.print(
        f"[bold]agentrt demo[/]: scatter-gather over {len(pieces)} log chunks on "
        f"endpoint [cyan]{ep_name}[/] ({ep.kind}, model {ep.model})"
    )
    try:
        with recorder.activate():
            with stage("map"):

                async def summarize(item: tuple[int, str]) -> str:
                    return await _map_one(model, *item)

                outcomes = await gather_map(summarize, list(enumerate(pieces)), on_error="raise")
            summaries = [o.unwrap() for o in outcomes]
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
