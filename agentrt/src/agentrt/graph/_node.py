"""Nodes of a dependency graph and the context each one runs with.

A node is an async function of a :class:`NodeContext`, which carries its
inputs (the outputs of the nodes it declared), the run's clock, and the way
to make a model call that streams into the run's event stream when the node
is user-facing and runs non-streaming otherwise.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Literal, TypeVar

from agentrt._clock import Clock
from agentrt.graph._events import GraphEvent, NodeProgress, NodeToken
from agentrt.graph._schedule import GraphError
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult, Completed, TextDelta

__all__ = ["FailurePolicy", "Node", "NodeContext", "NodeFn", "NodeKind", "typed_value"]

T = TypeVar("T")


def typed_value(values: Mapping[str, object], node: str, kind: type[T]) -> T:
    """``values[node]`` as a ``kind``: a graph's values are typed where read, and checked."""
    value = values[node]
    if not isinstance(value, kind):
        raise GraphError(
            f"node {node!r} gave {type(value).__name__}, not the {kind.__name__} read here"
        )
    return value


FailurePolicy = Literal["fail_fast", "continue"]
NodeKind = Literal["model", "tool", "fn"]
NodeFn = Callable[["NodeContext"], Awaitable[object]]  # its output: opaque to the runtime


@dataclass(frozen=True, slots=True)
class Node:
    """One step of a graph.

    ``on_error``: ``fail_fast`` cancels the whole run (every in-flight node,
    and the calls they await) and re-raises; ``continue`` records the error,
    skips the nodes that depend on this one, and lets unrelated branches
    finish. ``deadline_s`` is measured on the run's clock from the node's
    start. ``stream`` makes the node's model calls stream their tokens into
    the run's event stream (for user-facing nodes).
    """

    name: str
    run: NodeFn
    inputs: tuple[str, ...] = ()
    kind: NodeKind = "fn"
    on_error: FailurePolicy = "fail_fast"
    deadline_s: float | None = None
    stream: bool = False


class NodeContext:
    """What a running node sees."""

    __slots__ = ("_emit", "_t0", "clock", "inputs", "node")

    def __init__(
        self,
        node: Node,
        inputs: Mapping[str, object],  # as GraphResult.outputs: typed where read (input)
        clock: Clock,
        emit: Callable[[GraphEvent], None],
        t0: float,
    ) -> None:
        self.node = node
        self.inputs = inputs
        self.clock = clock
        self._emit = emit
        self._t0 = t0

    @property
    def name(self) -> str:
        return self.node.name

    def input(self, node: str, kind: type[T]) -> T:
        """The output of the input node ``node``, which must be a ``kind``."""
        return typed_value(self.inputs, node, kind)

    def now(self) -> float:
        """Seconds since the run started."""
        return self.clock.now() - self._t0

    def progress(self, data: object) -> None:
        """Put a progress event into the run's event stream."""
        self._emit(NodeProgress(self.node.name, data, self.now()))

    async def call_model(
        self, client: ChatModel, request: ChatRequest, *, stream: bool | None = None
    ) -> ChatResult:
        """One model call, recorded under this node's stage.

        Streams (forwarding tokens as :class:`NodeToken` events) when the node
        is user-facing or ``stream`` says so; otherwise one non-streaming
        call, which costs the provider and the client less.
        """
        if not (self.node.stream if stream is None else stream):
            return await client.complete(request)
        result: ChatResult | None = None
        async for ev in client.stream(request):
            if isinstance(ev, TextDelta):
                self._emit(NodeToken(self.node.name, ev.text, self.now()))
            elif isinstance(ev, Completed):
                result = ev.result
        assert result is not None  # stream() always ends with Completed or raises
        return result
