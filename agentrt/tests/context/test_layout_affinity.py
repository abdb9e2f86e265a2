"""Prefix-stable layout and the session-affinity router."""

from __future__ import annotations

import asyncio

import pytest

from agentrt._clock import FakeClock
from agentrt._errors import ConfigError
from agentrt.context import AffinityModel, AffinityRouter, PromptLayout, affinity_key, request_key
from agentrt.llm import ChatRequest, FakeModel


def _bytes(req: ChatRequest) -> str:
    return "".join(f"{m.role}\x00{m.content}\x01" for m in req.messages)


def test_requests_share_their_bytes_up_to_the_varying_part() -> None:
    layout = PromptLayout.of("sys", [("Bug report", "it crashes"), ("Evidence", "line 3")])
    a, b = _bytes(layout.request("chunk A")), _bytes(layout.request("chunk BB"))
    common = len(layout.system) + len(layout.shared_text) + 4  # roles and separators
    assert a[:common] == b[:common]
    assert a.endswith("chunk A\x01") and b.endswith("chunk BB\x01")
    assert layout.shared_text in a


def test_extending_evidence_keeps_the_old_prefix() -> None:
    layout = PromptLayout.of("sys", [("Bug report", "it crashes")])
    longer = layout.extended("Evidence", "new fact")
    old = _bytes(layout.request("")).removesuffix("\x01")
    assert _bytes(longer.request("x")).startswith(old)
    assert longer.prefix_key != layout.prefix_key
    assert longer.shared_tokens > layout.shared_tokens


def test_router_sticks_to_home_until_overloaded() -> None:
    r = AffinityRouter(["a", "b", "c"], slack=2)
    assert r.route("s1").replica == "a"  # new key: least loaded
    assert r.route("s2").replica == "b"
    assert [r.route("s1").replica for _ in range(2)] == ["a", "a"]  # home
    # a now has 3 in flight, the least loaded (c) 0: more than slack=2 -> escape
    escaped = r.route("s1")
    assert escaped == escaped.__class__("c", "overloaded")
    assert r.home("s1") == "c"  # the prefix now lives there too
    r.done("a")
    with pytest.raises(ValueError):
        AffinityRouter(["a"]).done("a")


def test_router_respects_max_inflight_and_forgets_old_keys() -> None:
    r = AffinityRouter(["a", "b"], slack=100, max_inflight=1, memory=2)
    assert r.route("k").replica == "a"
    assert r.route("k").replica == "b"  # a is at its cap
    r.route("x")
    r.route("y")
    assert r.home("k") is None  # memory of 2 keys
    with pytest.raises(ConfigError):
        AffinityRouter([])


def test_request_key_uses_the_explicit_key_or_the_prompt_head() -> None:
    layout = PromptLayout.of("sys", [("Report", "r" * 3000)])
    assert request_key(layout.request("one")) == request_key(layout.request("two"))
    assert request_key(ChatRequest.of("a")) != request_key(ChatRequest.of("b"))
    with affinity_key("session-7"):
        assert request_key(ChatRequest.of("a")) == "session-7"


async def test_affinity_model_sends_a_scatter_to_one_replica() -> None:
    clock = FakeClock()
    replicas = {n: FakeModel(clock=clock) for n in ("r1", "r2", "r3")}
    model = AffinityModel(replicas, slack=32)
    layout = PromptLayout.of("sys", [("Report", "r" * 3000)])
    async with clock.autojumping():
        await asyncio.gather(*(model.complete(layout.request(f"c{i}")) for i in range(8)))
        with affinity_key("other-session"):
            await model.complete(ChatRequest.of("hello"))
    assert model.router.counts["new"] == 2
    assert model.router.counts["home"] == 7
    assert all(v == 0 for v in model.router.inflight.values())
