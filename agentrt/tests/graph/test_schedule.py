"""The sans-IO schedule: readiness, skipping, malformed graphs."""

from __future__ import annotations

import pytest

from agentrt._errors import UserError
from agentrt.graph import GraphError, NodeState, Schedule


def test_node_becomes_ready_only_when_its_last_input_is_done() -> None:
    s = Schedule({"a": [], "b": [], "c": ["a", "b"], "d": ["c"]})
    assert sorted(s.start()) == ["a", "b"]
    assert s.done("a") == []
    assert s.done("b") == ["c"]
    assert s.state["c"] is NodeState.RUNNING
    assert s.done("c") == ["d"]
    assert not s.finished
    s.done("d")
    assert s.finished


def test_failure_skips_dependents_transitively_but_not_unrelated_nodes() -> None:
    s = Schedule({"a": [], "b": ["a"], "c": ["b"], "x": []})
    s.start()
    assert sorted(s.failed("a")) == ["b", "c"]
    assert s.state["x"] is NodeState.RUNNING
    s.done("x")
    assert s.finished


def test_unknown_input_and_cycles_are_user_errors() -> None:
    with pytest.raises(GraphError, match="needs 'zz'"):
        Schedule({"a": ["zz"]})
    with pytest.raises(UserError, match="cycle through a, b"):
        Schedule({"a": ["b"], "b": ["a"], "c": []})


def test_a_node_cannot_finish_twice() -> None:
    s = Schedule({"a": []})
    s.start()
    s.done("a")
    with pytest.raises(RuntimeError):
        s.done("a")
