"""One async interface for chat completions, whatever serves the model.

:class:`ModelClient` does what every backend shares — its own concurrency
permit, timing on an injected clock, the check of structured output, and a
:class:`~agentrt.metrics.CallRecord` per call — and leaves two primitives to
the backend: one non-streaming request and one streaming request. It never
retries: retrying belongs to one layer above it, so that attempts do not
multiply (3 SDK retries under 3 framework re-attempts make 9 calls).
"""

from __future__ import annotations

import abc
import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from agentrt._clock import Clock, SystemClock
from agentrt._errors import ProviderError, StructuredOutputError
from agentrt.llm._structured import parse_output
from agentrt.llm._types import (
    CallTiming,
    ChatRequest,
    ChatResult,
    Completed,
    StreamEvent,
    TextDelta,
    Usage,
)
from agentrt.metrics._record import CallRecord, Outcome
from agentrt.metrics._recorder import MetricsRecorder, current_recorder, current_stage

__all__ = ["ModelClient", "RawResult", "check_structured"]


@dataclass(frozen=True, slots=True)
class RawResult:
    """What a backend returns; the base class adds timing and checks."""

    text: str
    model: str
    usage: Usage
    finish_reason: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # seconds from send to first token, when a non-streaming backend knows it
    ttft_s: float | None = None


def check_structured(text: str, schema: dict[str, Any], model: str) -> Any:
    """Parse ``text`` as JSON and check the schema's top-level shape.

    Raises :class:`StructuredOutputError` naming the model and the problem.
    Only the top level is checked (type object/array and required keys):
    grammar-constrained backends guarantee the rest, and for the others a
    full validator would be a dependency for little gain.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        snippet = text[:60].replace("\n", " ")
        raise StructuredOutputError(
            f"model {model!r} answered text that is not the requested JSON "
            f"({exc.msg} at char {exc.pos}: {snippet!r}); "
            "use a model that supports structured output or retry"
        ) from None
    want = schema.get("type")
    if want == "object" and not isinstance(value, dict):
        raise StructuredOutputError(
            f"model {model!r} answered JSON {type(value).__name__}, not the requested object"
        )
    if want == "array" and not isinstance(value, list):
        raise StructuredOutputError(
            f"model {model!r} answered JSON {type(value).__name__}, not the requested array"
        )
    if isinstance(value, dict):
        missing = [k for k in schema.get("required", []) if k not in value]
        if missing:
            raise StructuredOutputError(
                f"model {model!r} answered JSON without required field(s) {', '.join(missing)}"
            )
    return value


class ModelClient(abc.ABC):
    """Base of every backend.

    ``max_concurrency`` is how many calls the endpoint serves at once, as
    configured; the client itself does not limit (one concurrency layer):
    :class:`~agentrt.flow.ConcurrencyLimitedModel` holds calls to it, and reports the
    wait as their queue wait. ``name`` labels the endpoint in metrics.
    """

    def __init__(
        self,
        *,
        model: str,
        name: str | None = None,
        max_concurrency: int | None = None,
        clock: Clock | None = None,
        recorder: MetricsRecorder | None = None,
    ) -> None:
        self.model = model
        self.name = name or model
        self.clock: Clock = clock or SystemClock()
        self._recorder = recorder
        self.max_concurrency = max_concurrency

    # -- backend primitives -------------------------------------------------
    @abc.abstractmethod
    async def _complete(self, request: ChatRequest, model: str) -> RawResult:
        """Send one non-streaming request."""

    @abc.abstractmethod
    def _stream(self, request: ChatRequest, model: str) -> AsyncIterator[str | RawResult]:
        """Send one streaming request: yield text pieces, then one RawResult."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections or model memory."""

    # -- public API ---------------------------------------------------------
    async def complete(self, request: ChatRequest) -> ChatResult:
        """One non-streaming call; returns the whole answer with usage and timing."""
        model = request.model or self.model
        start = self.clock.now()
        sent = start
        try:
            raw = await self._complete(request, model)
            end = self.clock.now()
            ttft = raw.ttft_s
            result = self._finish(request, raw, start, sent, end, ttft)
        except BaseException as exc:
            self._record_failure(request, model, start, sent, exc, streamed=False)
            raise
        self._record(request, result, start, streamed=False)
        return result

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """One streaming call: text deltas as they arrive, then :class:`Completed`."""
        model = request.model or self.model
        start = self.clock.now()
        sent = start
        first: float | None = None
        pieces: list[str] = []
        try:
            raw: RawResult | None = None
            async for item in self._stream(request, model):
                if isinstance(item, RawResult):
                    raw = item
                    continue
                if not item:
                    continue
                if first is None:
                    first = self.clock.now()
                pieces.append(item)
                yield TextDelta(item)
            if raw is None:
                raise ProviderError(
                    f"stream from {self.name!r} ended without a final result", status=None
                )
            end = self.clock.now()
            if not raw.text:
                raw = RawResult(
                    "".join(pieces), raw.model, raw.usage, raw.finish_reason, raw.headers
                )
            ttft = (first - sent) if first is not None else None
            result = self._finish(request, raw, start, sent, end, ttft)
        except BaseException as exc:
            self._record_failure(request, model, start, sent, exc, streamed=True, ttft=first)
            raise
        self._record(request, result, start, streamed=True)
        yield Completed(result)

    async def stream_text(self, request: ChatRequest) -> ChatResult:
        """Run a streaming call to its end and return the result (for measuring)."""
        result: ChatResult | None = None
        async for ev in self.stream(request):
            if isinstance(ev, Completed):
                result = ev.result
        assert result is not None
        return result

    # -- internals ----------------------------------------------------------
    def _finish(
        self,
        request: ChatRequest,
        raw: RawResult,
        start: float,
        sent: float,
        end: float,
        ttft: float | None,
    ) -> ChatResult:
        out = raw.usage.output_tokens
        tps: float | None = None
        if ttft is not None and out > 1 and end - sent - ttft > 0:
            # TTFT seen on a token stream (ours, or the backend's own as llama.cpp's
            # in-process generation): the first token at TTFT, the other out-1 decode
            tps = (out - 1) / (end - sent - ttft)
        output_tps = out / (end - sent) if end > sent and out else None
        parsed: Any = None
        if request.output_type is not None:
            parsed = parse_output(raw.text, request.output_type, raw.model)
        elif request.json_schema is not None:
            parsed = check_structured(raw.text, request.json_schema, raw.model)
        timing = CallTiming(
            queue_wait_s=sent - start,
            ttft_s=ttft,
            decode_tps=tps,
            wall_s=end - start,
            output_tps=output_tps,
        )
        return ChatResult(
            text=raw.text,
            model=raw.model,
            usage=raw.usage,
            timing=timing,
            finish_reason=raw.finish_reason,
            parsed=parsed,
            headers=raw.headers,
        )

    def _recorder_now(self) -> MetricsRecorder | None:
        return self._recorder or current_recorder()

    def _record(
        self, request: ChatRequest, result: ChatResult, start: float, *, streamed: bool
    ) -> None:
        rec = self._recorder_now()
        if rec is None:
            return
        t = result.timing
        rec.add(
            CallRecord(
                stage=request.stage or current_stage(),
                kind="model",
                name=result.model,
                started_at=rec.relative(start),
                wall_s=t.wall_s,
                queue_wait_s=t.queue_wait_s,
                ttft_s=t.ttft_s,
                input_tokens=result.usage.input_tokens,
                output_tokens=result.usage.output_tokens,
                cached_tokens=result.usage.cached_tokens,
                decode_tps=t.decode_tps,
                output_tps=t.output_tps,
                streamed=streamed,
            )
        )

    def _record_failure(
        self,
        request: ChatRequest,
        model: str,
        start: float,
        sent: float,
        exc: BaseException,
        *,
        streamed: bool,
        ttft: float | None = None,
    ) -> None:
        rec = self._recorder_now()
        if rec is None:
            return
        cancelled = isinstance(exc, asyncio.CancelledError | GeneratorExit)
        outcome: Outcome = "cancelled" if cancelled else "error"
        now = self.clock.now()
        rec.add(
            CallRecord(
                stage=request.stage or current_stage(),
                kind="model",
                name=model,
                started_at=rec.relative(start),
                wall_s=now - start,
                queue_wait_s=sent - start,
                ttft_s=(ttft - sent) if ttft is not None else None,
                outcome=outcome,
                error=None if cancelled else f"{type(exc).__name__}: {exc}",
                streamed=streamed,
            )
        )
