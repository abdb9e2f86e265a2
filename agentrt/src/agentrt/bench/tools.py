"""`tools`: three independent tool calls and one that needs two of them.

weather, calendar and flights do not depend on each other; the itinerary
(a model call against the simulator) needs weather and calendar. Run one
after another, the cost is the sum; run as a graph, it should be the
critical path (the longest dependent chain of the measured node durations).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agentrt._clock import ScaledClock
from agentrt.bench.harness import BenchResult, benchmark
from agentrt.bench.simproc import simulated_model
from agentrt.graph._executor import Graph
from agentrt.llm._types import ChatRequest
from agentrt.metrics._recorder import MetricsRecorder

__all__ = ["ToolsOptions", "run_tools"]

TOOL_S = {"weather": 1.5, "calendar": 0.8, "flights": 3.0}  # simulated tool latency


@dataclass(frozen=True, slots=True)
class ToolsOptions:
    time_scale: float = 10.0
    itinerary_tokens: int = 100  # the model call's output


@benchmark(
    "tools",
    "3 independent tool calls + 1 dependent model call: sequential vs graph",
    ToolsOptions,
)
async def run_tools(opts: ToolsOptions) -> BenchResult:
    scale = opts.time_scale
    clock = ScaledClock(scale)
    rec = MetricsRecorder(clock)

    def tool(name: str) -> Callable[[], Awaitable[str]]:
        async def call() -> str:
            await clock.sleep(TOOL_S[name])
            return f"{name}: ok"

        return call

    async with simulated_model(clock, time_scale=scale, recorder=rec) as client:

        def itinerary_request(weather: str, calendar: str) -> ChatRequest:
            return ChatRequest.of(
                f"Plan a trip. {weather}. {calendar}.",
                max_tokens=opts.itinerary_tokens,
            )

        async def itinerary(weather: str, calendar: str) -> str:
            return (await client.complete(itinerary_request(weather, calendar))).text

        t0 = clock.now()
        w = await tool("weather")()
        c = await tool("calendar")()
        await tool("flights")()
        await itinerary(w, c)
        sequential_s = clock.now() - t0

        g = Graph()
        for name in TOOL_S:
            g.tool(name, tool(name))
        g.tool("itinerary", itinerary, inputs=["weather", "calendar"])
        result = await g.run(clock=clock, recorder=rec)
    r = result.report
    ratio = r.wall_s / r.critical_path_s
    return BenchResult(
        name="tools",
        figures={
            "time_scale": scale,
            "sequential_s": round(sequential_s, 3),
            "graph_s": round(r.wall_s, 3),
            "critical_path_s": round(r.critical_path_s, 3),
            "critical_path": list(r.critical_path),
            "sum_of_nodes_s": round(r.sum_s, 3),
        },
        ratios=(("graph/critical path", ratio), ("sequential/graph", sequential_s / r.wall_s)),
        checks=(("graph_s ≤ 1.02 × critical_path_s", ratio <= 1.02),),
        notes=(
            f"tool latencies {TOOL_S} simulated on the scaled clock; itinerary is a "
            "non-streaming call to `agentrt sim serve` (default profile)",
            "critical_path_s is the longest dependent chain of the node durations measured "
            "in this same graph run",
            "gantt:\n" + r.gantt(40),
        ),
    )
