"""`agentrt demo`: a small scatter-gather on the embedded model.

Map: the bundled incident log is chunked greedily by lines and each chunk is
summarized by its own call (internal stage, not streamed). Reduce: one
judgment call over the summaries, streamed to the terminal because a person
watches it. Then every call's metrics and the per-stage aggregates.

Faults end in results: a chunk whose call failed after its retries is a
failed item, reported as "N of M chunks failed (reason)", and the judgment
is made from the others; a judgment call that fails after its retries is
reported the same way ("judgment failed (reason)"). The JSON is written
whatever happened. Exit status: 0 when at least one chunk was summarized,
3 (:data:`EXIT_NO_RESULT`) when every chunk failed, 2 for a user error (bad
configuration, an endpoint that cannot be reached).
"""

from __future__ import annotations

import collections
import importlib.resources
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from agentrt._clock import Clock, SystemClock
from agentrt._config import load_settings
from agentrt._errors import AgentrtError, ProviderError, UserError
from agentrt._json import JsonValue
from agentrt.chunking import chunk_log
from agentrt.flow._clients import client_for_role
from agentrt.graph import Outcome, gather_map
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, Completed, TextDelta
from agentrt.metrics._recorder import MetricsRecorder, stage
from agentrt.metrics._table import calls_table, stages_table
from agentrt.tokens._counting import estimate_tokens

__all__ = ["EXIT_NO_RESULT", "DemoResult", "demo_log", "failure_line", "log_chunks", "run_demo"]

EXIT_NO_RESULT = 3  # every chunk failed: nothing to show

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


def _reason(exc: BaseException) -> str:
    """A short name for why a call failed: the HTTP status, else the error's kind."""
    status = getattr(exc, "status", None)
    if status is not None:
        return str(status)
    code = getattr(exc, "code", None)
    return str(code) if code else type(exc).__name__


def failure_line(failed: int, total: int, errors: Sequence[BaseException]) -> str:
    """ "2 of 4 chunks failed (503 x2)": what failed and why, in one line."""
    counts = collections.Counter(_reason(e) for e in errors)
    why = ", ".join(f"{r} x{n}" if n > 1 else r for r, n in counts.most_common())
    return f"{failed} of {total} chunks failed ({why})"


@dataclass(frozen=True, slots=True)
class DemoResult:
    recorder: MetricsRecorder
    chunks: int
    failed: tuple[tuple[int, str], ...]  # (chunk number, error)
    judgment: str | None
    judgment_error: str | None

    @property
    def exit_code(self) -> int:
        return 0 if len(self.failed) < self.chunks else EXIT_NO_RESULT

    def summary(self) -> dict[str, JsonValue]:
        return {
            "chunks": self.chunks,
            "failed_chunks": [{"chunk": i, "error": e} for i, e in self.failed],
            "judgment": self.judgment,
            "judgment_error": self.judgment_error,
            "exit_code": self.exit_code,
        }


def _user_error(outcomes: list[Outcome[tuple[int, str], str]]) -> UserError | None:
    """When every chunk failed for the same user-fixable reason, that reason."""
    errors = [o.error for o in outcomes if o.error is not None]
    if errors and len(errors) == len(outcomes) and isinstance(errors[0], UserError):
        return errors[0]
    return None


async def run_demo(
    console: Console,
    *,
    json_path: Path | None = None,
    config: Path | None = None,
    chunks: int = 4,
    model: ChatModel | None = None,
    clock: Clock | None = None,
) -> DemoResult:
    """Run the demo; ``model`` and ``clock`` replace the configured ones (tests)."""
    settings = load_settings(config, probe_local=True)
    ep_name, ep = settings.endpoint_for("default")
    recorder = MetricsRecorder(clock or SystemClock())
    if model is None:
        model = client_for_role(settings, "default", recorder=recorder, clock=clock)
    pieces = log_chunks(demo_log(), chunks)
    console.print(
        f"[bold]agentrt demo[/]: scatter-gather over {len(pieces)} log chunks on "
        f"endpoint [cyan]{ep_name}[/] ({ep.kind}, model {ep.model})"
    )
    judgment: str | None = None
    judgment_error: str | None = None
    try:
        with recorder.activate():
            with stage("map"):

                async def summarize(item: tuple[int, str]) -> str:
                    return await _map_one(model, *item)

                # "collect": a chunk that fails after its retries is a failed
                # item; the others go on ("raise" would cancel them)
                outcomes = await gather_map(summarize, list(enumerate(pieces)), on_error="collect")
            user = _user_error(outcomes)
            if user is not None:
                raise user
            summaries = [o.value for o in outcomes if o.ok and o.value is not None]
            errors = [o.error for o in outcomes if o.error is not None]
            for s in summaries:
                console.print(f"  {s}")
            if errors:
                console.print(f"[yellow]{failure_line(len(errors), len(pieces), errors)}[/]")
            if summaries:
                judgment, judgment_error = await _judge(console, model, summaries)
    finally:
        await model.aclose()
    console.print(calls_table(recorder.records))
    console.print(stages_table(recorder.by_stage()))
    result = DemoResult(
        recorder,
        len(pieces),
        tuple((o.index + 1, f"{type(o.error).__name__}: {o.error}") for o in outcomes if o.error),
        judgment,
        judgment_error,
    )
    if result.exit_code:
        console.print(f"[red]no result[/]: every chunk failed (exit status {result.exit_code})")
    if json_path:
        recorder.write_json(json_path, extra={"demo": result.summary()})
        console.print(f"metrics written to {json_path}")
    return result


async def _judge(
    console: Console, model: ChatModel, summaries: list[str]
) -> tuple[str | None, str | None]:
    """The streamed judgment over the summaries: (text, None) or (None, why it failed)."""
    req = ChatRequest.of(
        "Summaries of log chunks from one incident, in time order:\n"
        + "\n".join(summaries)
        + "\nWhat is the most likely root cause? One or two sentences.",
        system=REDUCE_SYSTEM,
        max_tokens=96,
        stage="reduce",
    )
    console.print("[bold]judgment (streamed):[/] ", end="")
    pieces: list[str] = []
    text: str | None = None
    try:
        async for ev in model.stream(req):
            if isinstance(ev, TextDelta):
                pieces.append(ev.text)
                console.print(ev.text, end="", markup=False, highlight=False)
            elif isinstance(ev, Completed):
                console.print()
                text = ev.result.text or "".join(pieces)
    except UserError:
        raise
    except (ProviderError, AgentrtError) as exc:
        console.print()
        console.print(f"[yellow]judgment failed ({_reason(exc)})[/]")
        return None, f"{type(exc).__name__}: {exc}"
    return (text if text is not None else "".join(pieces)), None
