"""The sans-IO core of the graph executor: which nodes may start now.

:class:`Schedule` is a plain state machine over node names. The async driver
tells it what happened (a node finished, failed, was cancelled) and it
answers with the nodes that became ready, so a node starts the moment its
last input is ready — there are no supersteps and no barrier between
unrelated branches. Everything here is testable without an event loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum

from agentrt._errors import UserError

__all__ = ["GraphError", "NodeState", "Schedule"]


class GraphError(UserError):
    """The graph is malformed: an unknown input, a cycle, a duplicate name."""


class NodeState(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"


_FINAL = frozenset({NodeState.DONE, NodeState.FAILED, NodeState.SKIPPED, NodeState.CANCELLED})


class Schedule:
    """Dependency bookkeeping for one run.

    ``deps`` maps each node to the nodes whose outputs it needs. Invariant:
    a node is RUNNING only after every one of its inputs is DONE, and a node
    whose input FAILED (or was SKIPPED) is SKIPPED, never started.
    """

    def __init__(self, deps: Mapping[str, Sequence[str]]) -> None:
        self.deps: dict[str, tuple[str, ...]] = {n: tuple(d) for n, d in deps.items()}
        self.dependents: dict[str, list[str]] = {n: [] for n in self.deps}
        for node, inputs in self.deps.items():
            for dep in inputs:
                if dep not in self.deps:
                    raise GraphError(f"node {node!r} needs {dep!r}, which is not in the graph")
                self.dependents[dep].append(node)
        self._waiting = {n: set(d) for n, d in self.deps.items()}
        self.state = dict.fromkeys(self.deps, NodeState.PENDING)
        self._open = len(self.deps)  # nodes not yet in a final state
        self.order = self._topological()

    def _topological(self) -> list[str]:
        indeg = {n: len(set(d)) for n, d in self.deps.items()}
        ready = [n for n, k in indeg.items() if k == 0]
        out: list[str] = []
        while ready:
            n = ready.pop()
            out.append(n)
            for m in dict.fromkeys(self.dependents[n]):
                indeg[m] -= 1
                if indeg[m] == 0:
                    ready.append(m)
        if len(out) != len(self.deps):
            cyclic = sorted(n for n, k in indeg.items() if k > 0)
            raise GraphError(f"the graph has a cycle through {', '.join(cyclic)}")
        return out

    @property
    def finished(self) -> bool:
        return self._open == 0

    def start(self) -> list[str]:
        """The nodes with no inputs; they are marked RUNNING."""
        return self._take([n for n, w in self._waiting.items() if not w])

    def done(self, name: str) -> list[str]:
        """``name`` produced its output; returns the nodes that became ready."""
        self._close(name, NodeState.DONE)
        ready = []
        for m in self.dependents[name]:
            waiting = self._waiting[m]
            waiting.discard(name)
            if not waiting and self.state[m] is NodeState.PENDING:
                ready.append(m)
        return self._take(list(dict.fromkeys(ready)))

    def failed(self, name: str, *, cancelled: bool = False) -> list[str]:
        """``name`` failed; returns its dependents, transitively, now SKIPPED."""
        self._close(name, NodeState.CANCELLED if cancelled else NodeState.FAILED)
        skipped: list[str] = []
        stack = list(self.dependents[name])
        while stack:
            m = stack.pop()
            if self.state[m] is NodeState.PENDING:
                self._close(m, NodeState.SKIPPED)
                skipped.append(m)
                stack.extend(self.dependents[m])
        return skipped

    def _take(self, names: list[str]) -> list[str]:
        for n in names:
            self.state[n] = NodeState.RUNNING
        return names

    def _close(self, name: str, state: NodeState) -> None:
        if self.state[name] in _FINAL:
            raise RuntimeError(f"node {name!r} is already {self.state[name]}")
        self.state[name] = state
        self._open -= 1
