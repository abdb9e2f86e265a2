"""A fake model for tests: the latency model on an injected clock, no I/O.

Shipped with the library so users can test their agents the way we test
ours: with a :class:`~agentrt._clock.FakeClock` a call "takes" exactly
TTFT + output tokens / rate of clock time and the test runs instantly.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Iterable, Mapping

from agentrt._clock import Clock
from agentrt._errors import ProviderError
from agentrt.llm._client import ModelClient, RawResult
from agentrt.llm._responder import DefaultResponder, Responder, ResponderInput
from agentrt.llm._types import ChatRequest, Usage
from agentrt.metrics._recorder import MetricsRecorder
from agentrt.tokens._counting import EstimateCounter, estimate_tokens
from agentrt.tokens._latency import LatencyModel

__all__ = ["FakeModel", "provider_error"]


class FakeModel(ModelClient):
    """Answers from a responder, timed by a :class:`LatencyModel` on ``clock``.

    ``failures`` is consumed one entry per call: an exception is raised
    (after TTFT, as a provider would), ``None`` lets the call succeed. Every
    request is kept in ``requests`` for assertions.
    """

    def __init__(
        self,
        *,
        model: str = "fake",
        latency: LatencyModel | None = None,
        responder: Responder | Callable[[ResponderInput], str] | None = None,
        failures: Iterable[BaseException | None] = (),
        chunk_tokens: int = 1,
        max_concurrency: int | None = None,
        clock: Clock | None = None,
        recorder: MetricsRecorder | None = None,
    ) -> None:
        super().__init__(
            model=model, max_concurrency=max_concurrency, clock=clock, recorder=recorder
        )
        self.latency = latency or LatencyModel(0.0, 0.0, 1e9)
        self.responder = responder or DefaultResponder()
        self._failures = list(failures)
        self.chunk_tokens = max(1, chunk_tokens)
        self.requests: list[ChatRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._counter = EstimateCounter()

    def _answer(self, request: ChatRequest) -> tuple[str, int]:
        text = self.responder(
            ResponderInput(
                messages=tuple((m.role, m.content) for m in request.messages),
                max_tokens=request.max_tokens,
                json_schema=request.json_schema,
                seed=request.seed or 0,
            )
        )
        return text, self._counter.count_messages(m.content for m in request.messages)

    async def _prefill(self, request: ChatRequest, input_tokens: int) -> None:
        self.requests.append(request)
        await self.clock.sleep(self.latency.ttft(input_tokens))
        if self._failures:
            failure = self._failures.pop(0)
            if failure is not None:
                raise failure

    async def _complete(self, request: ChatRequest, model: str) -> RawResult:
        text, n_in = self._answer(request)
        self._enter()
        try:
            await self._prefill(request, n_in)
            n_out = estimate_tokens(text)
            await self.clock.sleep(max(0, n_out - 1) / self.latency.decode_tps)
            ttft = self.latency.ttft(n_in)
        finally:
            self._exit()
        return RawResult(text, model, Usage(n_in, n_out), "stop", ttft_s=ttft)

    async def _stream(self, request: ChatRequest, model: str) -> AsyncIterator[str | RawResult]:
        text, n_in = self._answer(request)
        self._enter()
        try:
            await self._prefill(request, n_in)
            words = _split_tokens(text)
            for i in range(0, len(words), self.chunk_tokens):
                if i:
                    await self.clock.sleep(self.chunk_tokens / self.latency.decode_tps)
                yield "".join(words[i : i + self.chunk_tokens])
        finally:
            self._exit()
        yield RawResult(text, model, Usage(n_in, estimate_tokens(text)), "stop")

    def _enter(self) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _exit(self) -> None:
        self.in_flight -= 1


def _split_tokens(text: str) -> list[str]:
    """Split text into pieces of about one estimated token (4 bytes) each."""
    n = max(1, estimate_tokens(text))
    step = math.ceil(len(text) / n) if text else 1
    return [text[i : i + step] for i in range(0, len(text), step)] or [""]


def provider_error(
    status: int,
    *,
    code: str | None = None,
    retry_after: float | None = None,
    headers: Mapping[str, str] | None = None,
    retryable: bool | None = None,
) -> ProviderError:
    """Convenience for ``failures=``: a provider error with this status."""
    return ProviderError(
        f"fake provider answered {status}",
        status=status,
        code=code,
        retry_after=retry_after,
        headers=headers,
        retryable=retryable,
    )
