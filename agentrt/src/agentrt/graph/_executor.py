"""The async driver of a dependency graph.

Each node runs as its own task in one :class:`asyncio.TaskGroup`; when it
finishes, the :class:`~agentrt.graph._schedule.Schedule` names the nodes that
became ready and they start right then, from inside the finishing task. A
slow branch therefore never holds up an unrelated fast one (LangGraph's
supersteps do), and the run's wall-clock follows its critical path.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from agentrt._clock import Clock, SystemClock
from agentrt.graph._channel import Channel
from agentrt.graph._deadline import first_error, with_deadline
from agentrt.graph._events import GraphEvent, NodeFinished, NodeStarted
from agentrt.graph._node import (
    FailurePolicy,
    Node,
    NodeContext,
    NodeFn,
    NodeKind,
    T,
    typed_value,
)
from agentrt.graph._report import NodeTiming, RunReport
from agentrt.graph._schedule import GraphError, Schedule
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult
from agentrt.metrics._recorder import MetricsRecorder, current_recorder, stage

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Graph", "GraphResult", "GraphRun"]


class _NodeOptions(TypedDict, total=False):
    """The keyword arguments of :meth:`Graph.add` that :meth:`Graph.model` and
    :meth:`Graph.tool` pass on."""

    inputs: tuple[str, ...] | list[str]
    on_error: FailurePolicy
    deadline_s: float | None
    stream: bool


@dataclass(frozen=True, slots=True)
class GraphResult:
    """Outputs of the nodes that finished, errors of those that failed
    (under ``continue``), and the run's report."""

    # object: each node's output has its own type, which the reader names
    # through :meth:`output` (checked there), never assumed
    outputs: dict[str, object]
    errors: dict[str, BaseException]
    report: RunReport

    def __getitem__(self, node: str) -> object:
        return self.outputs[node]

    def output(self, node: str, kind: type[T]) -> T:
        """The output of ``node``, which must be a ``kind``."""
        return typed_value(self.outputs, node, kind)


class GraphRun:
    """A run in progress: iterate :meth:`events`; ``result`` once it ended."""

    def __init__(self, events: Channel[GraphEvent]) -> None:
        self._events = events
        self.result: GraphResult | None = None

    def events(self) -> AsyncIterator[GraphEvent]:
        return self._events


class Graph:
    """A set of nodes with declared inputs; build it, then :meth:`run` it."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}

    # -- building -----------------------------------------------------------
    def add(
        self,
        name: str,
        run: NodeFn,
        *,
        inputs: tuple[str, ...] | list[str] = (),
        kind: NodeKind = "fn",
        on_error: FailurePolicy = "fail_fast",
        deadline_s: float | None = None,
        stream: bool = False,
    ) -> str:
        """Add a node running ``run(ctx)``; returns its name for ``inputs=``."""
        if name in self.nodes:
            raise GraphError(f"the graph already has a node named {name!r}")
        self.nodes[name] = Node(name, run, tuple(inputs), kind, on_error, deadline_s, stream)
        return name

    def model(
        self,
        name: str,
        client: ChatModel,
        request: Callable[[Mapping[str, object]], ChatRequest],
        **kw: Unpack[_NodeOptions],
    ) -> str:
        """A node making one model call built from its inputs; outputs the ChatResult."""

        async def run(ctx: NodeContext) -> ChatResult:
            return await ctx.call_model(client, request(ctx.inputs))

        return self.add(name, run, kind="model", **kw)

    def tool(
        self, name: str, fn: Callable[..., Awaitable[object]], **kw: Unpack[_NodeOptions]
    ) -> str:
        """A node calling ``fn(**inputs)``, recorded as a tool call in the metrics."""

        async def run(ctx: NodeContext) -> object:
            rec = current_recorder()
            if rec is None:
                return await fn(**ctx.inputs)
            with rec.tool_call(name):
                return await fn(**ctx.inputs)

        return self.add(name, run, kind="tool", **kw)

    # -- running ------------------------------------------------------------
    async def run(
        self,
        *,
        clock: Clock | None = None,
        recorder: MetricsRecorder | None = None,
        deadline_s: float | None = None,
        on_event: Callable[[GraphEvent], None] | None = None,
    ) -> GraphResult:
        """Run every node; returns when all have finished, failed or been skipped.

        A ``fail_fast`` node's error cancels the run and is re-raised as is
        (a note names the node). ``deadline_s`` bounds the whole run.
        """
        clk = clock or SystemClock()
        with recorder.activate() if recorder else contextlib.nullcontext():
            work = _Execution(self.nodes, clk, on_event or _ignore)
            if deadline_s is None:
                return await work.run()
            return await with_deadline(clk, deadline_s, work.run(), what="graph run")

    @contextlib.asynccontextmanager
    async def running(
        self,
        *,
        clock: Clock | None = None,
        recorder: MetricsRecorder | None = None,
        deadline_s: float | None = None,
    ) -> AsyncIterator[GraphRun]:
        """Run in the background; the body consumes the event stream.

        ``async with g.running() as run: async for ev in run.events(): ...``;
        leaving the block early cancels the run.
        """
        chan: Channel[GraphEvent] = Channel()
        handle = GraphRun(chan)

        async def drive() -> None:
            try:
                handle.result = await self.run(
                    clock=clock, recorder=recorder, deadline_s=deadline_s, on_event=chan.push
                )
            finally:
                chan.close()

        try:
            async with asyncio.TaskGroup() as tg:
                task = tg.create_task(drive())
                try:
                    yield handle
                finally:
                    task.cancel()
        except BaseExceptionGroup as eg:
            raise first_error(eg) from None


def _ignore(_: GraphEvent) -> None:
    pass


async def _call(node: Node, ctx: NodeContext) -> object:
    return await node.run(ctx)


class _Execution:
    """State of one run; a fresh one per :meth:`Graph.run`."""

    def __init__(
        self, nodes: Mapping[str, Node], clock: Clock, emit: Callable[[GraphEvent], None]
    ) -> None:
        self.nodes = nodes
        self.clock = clock
        self.emit = emit
        self.schedule = Schedule({n: node.inputs for n, node in nodes.items()})
        self.outputs: dict[str, object] = {}
        self.errors: dict[str, BaseException] = {}
        self.timings: dict[str, NodeTiming] = {}
        self.ready_at: dict[str, float] = {}
        self.fatal: BaseException | None = None
        self.t0 = clock.now()

    async def run(self) -> GraphResult:
        try:
            async with asyncio.TaskGroup() as tg:
                self.tg = tg
                self._launch(self.schedule.start())
        except BaseExceptionGroup as eg:
            exc = self.fatal or first_error(eg)
            raise exc from None
        finally:
            self._close_unfinished()
        report = RunReport.build(list(self.timings.values()), self.clock.now() - self.t0)
        return GraphResult(dict(self.outputs), dict(self.errors), report)

    def _launch(self, names: list[str]) -> None:
        now = self.clock.now() - self.t0
        for name in names:
            self.ready_at[name] = now
            self.tg.create_task(self._node(self.nodes[name]), name=f"node:{name}")

    async def _node(self, node: Node) -> None:
        name = node.name
        start = self.clock.now() - self.t0
        self.emit(NodeStarted(name, start))
        ctx = NodeContext(
            node, {i: self.outputs[i] for i in node.inputs}, self.clock, self.emit, self.t0
        )
        try:
            with stage(name):
                if node.deadline_s is None:
                    value = await node.run(ctx)
                else:
                    value = await with_deadline(
                        self.clock, node.deadline_s, _call(node, ctx), what=f"graph node {name!r}"
                    )
        except asyncio.CancelledError:
            self._finish(node, start, "cancelled", None)
            raise
        except Exception as exc:
            self._finish(node, start, "failed", exc)
            if node.on_error == "fail_fast":
                exc.add_note(f"in graph node {name!r}")
                if self.fatal is None:
                    self.fatal = exc
                raise
            self.errors[name] = exc
            for skipped in self.schedule.failed(name):
                self._skip(skipped, name)
            return
        self.outputs[name] = value
        self._finish(node, start, "done", None)
        self._launch(self.schedule.done(name))

    def _finish(self, node: Node, start: float, status: str, exc: BaseException | None) -> None:
        end = self.clock.now() - self.t0
        err = None if exc is None else f"{type(exc).__name__}: {exc}"
        self.timings[node.name] = NodeTiming(
            node.name, node.kind, node.inputs, status, self.ready_at[node.name], start, end, err
        )
        self.emit(NodeFinished(node.name, status, end, err))

    def _skip(self, name: str, because: str) -> None:
        node = self.nodes[name]
        now = self.clock.now() - self.t0
        err = f"input {because!r} failed"
        self.timings[name] = NodeTiming(name, node.kind, node.inputs, "skipped", now, now, now, err)
        self.emit(NodeFinished(name, "skipped", now, err))

    def _close_unfinished(self) -> None:
        """After a cancelled run, mark never-started nodes skipped for the report."""
        for name in self.nodes:
            if name not in self.timings and name not in self.ready_at:
                self._skip(name, "run cancelled")
