"""OpenAI-compatible endpoints through the official ``openai`` SDK.

This covers OpenAI itself and every server that speaks its chat-completions
protocol (vLLM, SGLang, llama.cpp's server, Ollama, most providers, and our
simulator). The SDK's own retries are off (``max_retries=0``): retrying is
one layer's job, ours, and two retrying layers multiply attempts.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx
import openai

from agentrt._errors import EndpointUnreachable, ProviderError, UnknownModel
from agentrt.llm._client import RawResult
from agentrt.llm._sdk_backend import SdkModel
from agentrt.llm._types import ChatRequest, Usage

__all__ = ["OpenAIModel", "parse_retry_after", "prepare_sdk"]


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds form)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    sec = headers.get("retry-after")
    if sec is not None:
        try:
            return max(0.0, float(sec))
        except ValueError:
            return None  # an HTTP date: rare from model providers; treat as unknown
    return None


async def prepare_sdk(sdk: openai.AsyncOpenAI) -> None:
    """Run the SDK's one-time platform probe now, in a thread, before any call.

    The SDK detects the platform on its first request in a worker thread.
    Under a :class:`~agentrt._clock.FakeClock` that autojumps, a thread is
    invisible to the event loop, so time would jump while the first calls
    wait for it (how far depends on the machine's load): tests and
    benchmarks on a fake clock call this first. Harmless otherwise.
    """
    if getattr(sdk, "_platform", "unknown") is None:
        from openai._base_client import get_platform

        sdk._platform = await asyncio.to_thread(get_platform)


class OpenAIModel(SdkModel[openai.AsyncOpenAI]):
    """A model behind an OpenAI-compatible ``/v1/chat/completions``.

    ``http_client`` is handed to the SDK as is: an ``httpx.AsyncClient`` (the
    SDK duck-types it) or the SDK's own ``httpx2`` client.
    """

    def _default_name(self, base_url: str | None) -> str:
        return base_url or "openai"

    def _connect(
        self, *, base_url: str | None, api_key: str | None, timeout_s: float, http_client: Any
    ) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            max_retries=0,  # one retrying layer: ours
            timeout=timeout_s,
            http_client=http_client,
        )

    async def prepare(self) -> None:
        """Do the SDK's one-time setup now rather than inside the first timed call.

        See :func:`prepare_sdk`.
        """
        await prepare_sdk(self.sdk)

    def _params(self, request: ChatRequest, model: str) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.seed is not None:
            params["seed"] = request.seed
        if request.json_schema is not None:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": request.json_schema},
            }
        return params

    async def _complete(self, request: ChatRequest, model: str) -> RawResult:
        try:
            raw = await self.sdk.chat.completions.with_raw_response.create(
                **self._params(request, model)
            )
        except openai.APIError as exc:
            raise self._translate(exc, model) from exc
        resp = raw.parse()
        choice = resp.choices[0] if resp.choices else None
        return RawResult(
            text=(choice.message.content or "") if choice else "",
            model=resp.model or model,
            usage=_usage(resp.usage),
            finish_reason=choice.finish_reason if choice else None,
            headers=dict(raw.headers),
        )

    async def _stream(self, request: ChatRequest, model: str) -> AsyncIterator[str | RawResult]:
        params = self._params(request, model)
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
        pieces: list[str] = []
        usage: Usage | None = None
        finish: str | None = None
        got_model = model
        try:
            raw = await self.sdk.chat.completions.with_raw_response.create(**params)
            headers = dict(raw.headers)
            stream = raw.parse()
            async with stream:
                async for chunk in stream:
                    got_model = chunk.model or got_model
                    if chunk.usage is not None:
                        usage = _usage(chunk.usage)
                    for ch in chunk.choices:
                        if ch.finish_reason:
                            finish = ch.finish_reason
                        if ch.delta and ch.delta.content:
                            pieces.append(ch.delta.content)
                            yield ch.delta.content
        except openai.APIError as exc:
            raise self._translate(exc, model) from exc
        except httpx.HTTPError as exc:  # a body cut mid-stream surfaces here
            raise ProviderError(f"stream from {self.name} broke: {exc}", status=None) from exc
        if usage is None:
            # Some servers ignore include_usage; never guess silently.
            raise ProviderError(
                f"stream from {self.name} ended without usage (cut short, or the server "
                "ignores stream_options.include_usage)",
                status=None,
            )
        yield RawResult("".join(pieces), got_model, usage, finish, headers)

    def _translate(self, exc: openai.APIError, model: str) -> ProviderError:
        if isinstance(exc, openai.APITimeoutError):
            return ProviderError(f"{self.name} timed out", status=None, code="timeout")
        if isinstance(exc, openai.APIConnectionError):
            return EndpointUnreachable(
                f"cannot reach model endpoint {self.base_url or 'the default'}: "
                f"{exc.__cause__ or exc}; start it or fix base_url in the config"
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            headers = dict(exc.response.headers)
            body = exc.body if isinstance(exc.body, dict) else {}
            err = body.get("error", body) if isinstance(body, dict) else {}
            code = err.get("code") if isinstance(err, dict) else None
            if status == 404 and (code == "model_not_found" or "model" in str(exc.message).lower()):
                return UnknownModel(
                    f"endpoint {self.base_url or 'openai'} does not serve model {model!r}; "
                    "check the model name in the config"
                )
            return ProviderError(
                f"{self.name} answered {status}: {exc.message}",
                status=status,
                code=code,
                retry_after=parse_retry_after(headers),
                headers=headers,
            )
        return ProviderError(f"{self.name} failed: {exc}", status=None)


def _usage(u: openai.types.CompletionUsage | None) -> Usage:
    if u is None:
        return Usage()
    details = getattr(u, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return Usage(
        input_tokens=int(u.prompt_tokens or 0),
        output_tokens=int(u.completion_tokens or 0),
        cached_tokens=int(cached),
    )
