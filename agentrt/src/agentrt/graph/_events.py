"""The one event stream a caller consumes while a graph runs.

Times are seconds since the run started, on the run's clock.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GraphEvent", "NodeFinished", "NodeProgress", "NodeStarted", "NodeToken"]


@dataclass(frozen=True, slots=True)
class NodeStarted:
    node: str
    at: float


@dataclass(frozen=True, slots=True)
class NodeToken:
    """Streamed model output of a user-facing node."""

    node: str
    text: str
    at: float


@dataclass(frozen=True, slots=True)
class NodeProgress:
    """Anything a node chooses to report while it works."""

    node: str
    data: object  # opaque to the runtime: whatever the node passed to progress()
    at: float


@dataclass(frozen=True, slots=True)
class NodeFinished:
    """``status`` is done, failed, cancelled or skipped."""

    node: str
    status: str
    at: float
    error: str | None = None


GraphEvent = NodeStarted | NodeToken | NodeProgress | NodeFinished
