"""What a graph run did: per-node timings, the critical path, parallelism.

Enough for a Gantt chart (one row per node, start and end on one timeline)
and for the headline of this package: a run's wall-clock follows its
critical path (the longest chain of dependent durations), not the sum.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from agentrt._json import JsonObject

__all__ = ["NodeTiming", "RunReport", "critical_path"]


@dataclass(frozen=True, slots=True)
class NodeTiming:
    """One node's run; times are seconds since the run started.

    ``ready_at`` is when its last input became ready; the executor starts it
    at that same instant, so ``started_at - ready_at`` is pure scheduling
    overhead.
    """

    node: str
    kind: str
    inputs: tuple[str, ...]
    status: str
    ready_at: float
    started_at: float
    ended_at: float
    error: str | None = None

    @property
    def duration_s(self) -> float:
        return self.ended_at - self.started_at


def critical_path(
    durations: Mapping[str, float], deps: Mapping[str, Sequence[str]]
) -> tuple[tuple[str, ...], float]:
    """The longest chain of dependent durations: (nodes in order, seconds)."""
    best: dict[str, tuple[float, str | None]] = {}

    def visit(n: str) -> float:
        if n in best:
            return best[n][0]
        prev, base = None, 0.0
        for d in deps.get(n, ()):
            if d in durations and visit(d) > base:
                prev, base = d, visit(d)
        best[n] = (base + durations[n], prev)
        return best[n][0]

    if not durations:
        return (), 0.0
    end = max(durations, key=visit)
    path: list[str] = []
    cur: str | None = end
    while cur is not None:
        path.append(cur)
        cur = best[cur][1]
    return tuple(reversed(path)), best[end][0]


@dataclass(frozen=True, slots=True)
class RunReport:
    """``wall_s`` is the run's wall-clock; ``sum_s`` what running the nodes one
    after another would have taken; ``critical_path_s`` the lower bound any
    schedule has with these node durations."""

    timings: tuple[NodeTiming, ...]
    wall_s: float
    critical_path: tuple[str, ...]
    critical_path_s: float

    @classmethod
    def build(cls, timings: Sequence[NodeTiming], wall_s: float) -> RunReport:
        ran = {t.node: t.duration_s for t in timings if t.status != "skipped"}
        deps = {t.node: t.inputs for t in timings}
        path, length = critical_path(ran, deps)
        ordered = tuple(sorted(timings, key=lambda t: (t.started_at, t.node)))
        return cls(ordered, wall_s, path, length)

    @property
    def sum_s(self) -> float:
        return sum(t.duration_s for t in self.timings if t.status != "skipped")

    @property
    def parallelism(self) -> float:
        """Sum of node durations over wall-clock: how many nodes ran at once on average."""
        return self.sum_s / self.wall_s if self.wall_s > 0 else 0.0

    def timing(self, node: str) -> NodeTiming:
        for t in self.timings:
            if t.node == node:
                return t
        raise KeyError(node)

    def gantt(self, width: int = 60) -> str:
        """A text Gantt chart, one row per node."""
        span = self.wall_s or 1.0
        name_w = max((len(t.node) for t in self.timings), default=4)
        rows = []
        for t in self.timings:
            a = round(t.started_at / span * width)
            b = max(a + 1, round(t.ended_at / span * width))
            mark = "#" if t.node in self.critical_path else "="
            bar = " " * a + mark * (b - a)
            rows.append(f"{t.node:<{name_w}} |{bar:<{width}}| {t.duration_s:7.2f}s {t.status}")
        return "\n".join(rows)

    def to_json_obj(self) -> JsonObject:
        return {
            "wall_s": self.wall_s,
            "sum_s": self.sum_s,
            "critical_path": list(self.critical_path),
            "critical_path_s": self.critical_path_s,
            "nodes": [asdict(t) | {"duration_s": t.duration_s} for t in self.timings],
        }
