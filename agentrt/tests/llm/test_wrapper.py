"""Wrapper models stack, and what only the backend knows is found through them."""

from __future__ import annotations

from agentrt import FakeClock
from agentrt.flow import ConcurrencyLimitedModel, RetryingModel
from agentrt.llm import (
    ChatRequest,
    FakeModel,
    WrapperModel,
    find_layer,
    layers,
    max_concurrency,
    unwrap,
)


class Counting(WrapperModel):
    """A wrapper that counts the calls it passes down."""

    calls = 0

    async def complete(self, request):  # type: ignore[no-untyped-def]
        self.calls += 1
        return await super().complete(request)


async def test_wrappers_stack_and_unwrap_to_the_backend() -> None:
    backend = FakeModel(clock=FakeClock(), max_concurrency=3)
    counting = Counting(backend)
    limited = ConcurrencyLimitedModel(counting)
    stack = RetryingModel(limited)
    assert list(layers(stack)) == [stack, limited, counting, backend]
    assert stack.unwrap() is backend and unwrap(backend) is backend
    assert find_layer(stack, Counting) is counting
    assert find_layer(backend, Counting) is None
    assert max_concurrency(stack) == 3 and max_concurrency(FakeModel()) is None
    async with backend.clock.autojumping():  # type: ignore[attr-defined]
        result = await stack.complete(ChatRequest.of("hi", max_tokens=4))
    assert result.text and counting.calls == 1
    assert stack.model == backend.model and stack.name == backend.name
