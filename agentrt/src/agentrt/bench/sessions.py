"""`sessions`: the same agent with sequential vs concurrent tool calls, under a session budget.

An agent session keeps its context resident from its first model call to
its last, tool waits included. The workload: each session takes a few
steps, each a model call on the simulator followed by three tool calls.
Run once with the tools awaited one after another and once with them
awaited together, each time admitting sessions under the same budget
(a fixed number held at once) and measuring resident time and how many
sessions the budget served per window.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from agentrt._clock import ScaledClock
from agentrt.bench.harness import BenchResult, benchmark
from agentrt.bench.simproc import simulated_model
from agentrt.llm._openai_backend import OpenAIModel
from agentrt.llm._types import ChatRequest
from agentrt.pipeline import SessionGate

__all__ = ["SessionsOptions", "run_sessions_bench"]


async def _agent(
    gate: SessionGate,
    model: OpenAIModel,
    clock: ScaledClock,
    job: str,
    *,
    steps: int,
    tools: int,
    tool_s: float,
    concurrent: bool,
) -> None:
    async with gate.session(job) as s:
        for step in range(steps):
            await s.complete(model, ChatRequest.of(f"{job} step {step}", max_tokens=30))

            async def tool() -> None:
                async with s.tool():
                    await clock.sleep(tool_s)  # a tool the agent waits on

            if concurrent:
                async with asyncio.TaskGroup() as tg:
                    for _ in range(tools):
                        tg.create_task(tool())
            else:
                for _ in range(tools):
                    await tool()
        await s.complete(model, ChatRequest.of(f"{job} final answer", max_tokens=30))


@dataclass(frozen=True, slots=True)
class SessionsOptions:
    sessions: int = 40
    budget_sessions: int = 8  # held at once
    steps: int = 4  # per session
    tools_per_step: int = 3
    tool_s: float = 1.0  # each tool wait
    window_s: float = 600.0  # sessions per budget are counted per this window
    time_scale: float = 10.0


async def _run(
    model: OpenAIModel, clock: ScaledClock, opts: SessionsOptions, *, concurrent: bool
) -> tuple[float, float, int, float]:
    """(mean resident s, sessions per window measured, peak held, makespan s)."""
    gate = SessionGate(opts.budget_sessions, clock)
    n = opts.sessions
    start = clock.now()
    async with asyncio.TaskGroup() as tg:
        for i in range(n):
            tg.create_task(
                _agent(
                    gate,
                    model,
                    clock,
                    f"s{i}",
                    steps=opts.steps,
                    tools=opts.tools_per_step,
                    tool_s=opts.tool_s,
                    concurrent=concurrent,
                )
            )
    makespan = clock.now() - start
    rep = gate.report()
    per_window = n / makespan * opts.window_s
    return rep.mean_resident_s, per_window, rep.peak_held, makespan


@benchmark(
    "sessions",
    "session time and sessions per budget: sequential vs concurrent tool calls",
    SessionsOptions,
)
async def run_sessions_bench(opts: SessionsOptions) -> BenchResult:
    scale = opts.time_scale
    clock = ScaledClock(scale)
    async with simulated_model(clock, time_scale=scale) as model:
        seq = await _run(model, clock, opts, concurrent=False)
        conc = await _run(model, clock, opts, concurrent=True)
    return BenchResult(
        name="sessions",
        figures={
            "session_s_sequential": round(seq[0], 3),
            "session_s_concurrent": round(conc[0], 3),
            "sessions_per_budget_sequential": round(seq[1], 2),
            "sessions_per_budget_concurrent": round(conc[1], 2),
            "budget_sessions": opts.budget_sessions,
            "window_s": opts.window_s,
            "peak_sessions_held": max(seq[2], conc[2]),
            "makespan_s_sequential": round(seq[3], 2),
            "makespan_s_concurrent": round(conc[3], 2),
            "time_scale": scale,
        },
        ratios=(
            ("session_s_sequential / session_s_concurrent", seq[0] / conc[0]),
            ("sessions_per_budget concurrent / sequential", conc[1] / seq[1]),
        ),
        checks=(
            (
                "sessions held never exceeded the budget",
                max(seq[2], conc[2]) <= opts.budget_sessions,
            ),
        ),
        notes=(
            f"{opts.sessions} sessions of {opts.steps} steps, each a 30-token call on the "
            f"'default' simulator profile then {opts.tools_per_step} tool waits of "
            f"{opts.tool_s} s; budget {opts.budget_sessions} sessions held at once; "
            "sessions_per_budget = sessions finished per window_s of the budget, measured",
        ),
    )
