"""Dependency-graph execution and scatter-gather: latency follows the critical path."""

from agentrt.graph._deadline import DeadlineExceeded, first_error, with_deadline
from agentrt.graph._events import GraphEvent, NodeFinished, NodeProgress, NodeStarted, NodeToken
from agentrt.graph._executor import Graph, GraphResult, GraphRun
from agentrt.graph._node import FailurePolicy, Node, NodeContext, typed_value
from agentrt.graph._report import NodeTiming, RunReport, critical_path
from agentrt.graph._scatter import ErrorPolicy, Outcome, gather_map, scatter
from agentrt.graph._schedule import GraphError, NodeState, Schedule

__all__ = [
    "DeadlineExceeded",
    "ErrorPolicy",
    "FailurePolicy",
    "Graph",
    "GraphError",
    "GraphEvent",
    "GraphResult",
    "GraphRun",
    "Node",
    "NodeContext",
    "NodeFinished",
    "NodeProgress",
    "NodeStarted",
    "NodeState",
    "NodeTiming",
    "NodeToken",
    "Outcome",
    "RunReport",
    "Schedule",
    "critical_path",
    "first_error",
    "gather_map",
    "scatter",
    "typed_value",
    "with_deadline",
]
