"""Anthropic models through the official ``anthropic`` SDK (optional extra).

As with the OpenAI backend, the SDK's retries are off: one retrying layer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agentrt._errors import EndpointUnreachable, ProviderError, UnknownModel, UserError
from agentrt.llm._client import RawResult
from agentrt.llm._openai_backend import parse_retry_after
from agentrt.llm._sdk_backend import SdkModel
from agentrt.llm._types import ChatRequest, Usage

__all__ = ["AnthropicModel"]


def _sdk() -> Any:
    try:
        import anthropic
    except ImportError:
        raise UserError(
            "the anthropic backend needs the optional extra: pip install 'fixbugs[anthropic]'"
        ) from None
    return anthropic


class AnthropicModel(SdkModel[Any]):
    """A Claude model through the Messages API."""

    def _default_name(self, base_url: str | None) -> str:
        return "anthropic"

    def _connect(
        self, *, base_url: str | None, api_key: str | None, timeout_s: float, http_client: Any
    ) -> Any:
        self._anthropic = _sdk()
        return self._anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,  # one retrying layer: ours
            timeout=timeout_s,
            http_client=http_client,
        )

    def _params(self, request: ChatRequest, model: str) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "messages": [
                {"role": m.role, "content": m.content}
                for m in request.messages
                if m.role != "system"
            ],
        }
        if request.json_schema is not None:
            # The Messages API has no JSON mode; ask plainly and let the base
            # class check the answer.
            system = (system + "\n\n" if system else "") + (
                "Answer with only a JSON value matching this JSON schema, no prose: "
                + _compact(request.json_schema)
            )
        if system:
            params["system"] = system
        return params

    async def _complete(self, request: ChatRequest, model: str) -> RawResult:
        a = self._anthropic
        try:
            raw = await self.sdk.messages.with_raw_response.create(**self._params(request, model))
        except a.APIError as exc:
            raise self._translate(exc, model) from exc
        msg = raw.parse()
        text = "".join(getattr(b, "text", "") for b in msg.content)
        return RawResult(text, msg.model, _usage(msg.usage), msg.stop_reason, dict(raw.headers))

    async def _stream(self, request: ChatRequest, model: str) -> AsyncIterator[str | RawResult]:
        a = self._anthropic
        pieces: list[str] = []
        try:
            async with self.sdk.messages.stream(**self._params(request, model)) as stream:
                async for text in stream.text_stream:
                    pieces.append(text)
                    yield text
                msg = await stream.get_final_message()
        except a.APIError as exc:
            raise self._translate(exc, model) from exc
        yield RawResult("".join(pieces), msg.model, _usage(msg.usage), msg.stop_reason)

    def _translate(self, exc: Any, model: str) -> ProviderError:
        a = self._anthropic
        if isinstance(exc, a.APITimeoutError):
            return ProviderError(f"{self.name} timed out", status=None, code="timeout")
        if isinstance(exc, a.APIConnectionError):
            return EndpointUnreachable(
                f"cannot reach Anthropic endpoint {self.base_url or 'default'}: {exc}"
            )
        if isinstance(exc, a.APIStatusError):
            headers = dict(exc.response.headers)
            if exc.status_code == 404:
                return UnknownModel(f"Anthropic does not serve model {model!r}; check the config")
            return ProviderError(
                f"{self.name} answered {exc.status_code}: {exc.message}",
                status=exc.status_code,
                retry_after=parse_retry_after(headers),
                headers=headers,
            )
        return ProviderError(f"{self.name} failed: {exc}", status=None)


def _compact(schema: dict[str, Any]) -> str:
    import json

    return json.dumps(schema, separators=(",", ":"))


def _usage(u: Any) -> Usage:
    return Usage(
        input_tokens=int(getattr(u, "input_tokens", 0) or 0),
        output_tokens=int(getattr(u, "output_tokens", 0) or 0),
        cached_tokens=int(getattr(u, "cache_read_input_tokens", 0) or 0),
    )
