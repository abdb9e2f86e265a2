"""Dependency-graph execution and scatter-gather: latency follows the critical path."""

from agentrt.graph.deadline import DeadlineExceeded, first_error, with_deadline
from agentrt.graph.events import GraphEvent, NodeFinished, NodeProgress, NodeStarted, NodeToken
from agentrt.graph.executor import Graph, GraphResult, GraphRun
from agentrt.graph.node import FailurePolicy, Node, NodeContext
from agentrt.graph.report import NodeTiming, RunReport, critical_path
from agentrt.graph.scatter import ErrorPolicy, Outcome, gather_map, scatter
from agentrt.graph.schedule import GraphError, NodeState, Schedule

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
    "with_deadline",
]
