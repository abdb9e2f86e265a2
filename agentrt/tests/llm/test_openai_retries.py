"""Retries belong to one layer (ours): the SDK must never retry on its own."""

import httpx
import pytest

from agentrt._errors import EndpointUnreachable, ProviderError, UnknownModel
from agentrt.llm import ChatRequest, OpenAIModel


def _client(handler) -> tuple[OpenAIModel, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return handler(request)

    http = httpx.AsyncClient(transport=httpx.MockTransport(record))
    return OpenAIModel(model="m", base_url="http://provider/v1", http_client=http), seen


@pytest.mark.parametrize("status", [429, 500, 503, 529])
async def test_sdk_sends_exactly_one_request_per_call(status):
    model, seen = _client(
        lambda r: httpx.Response(
            status, headers={"retry-after": "7"}, json={"error": {"message": "busy"}}
        )
    )
    assert model.sdk.max_retries == 0
    with pytest.raises(ProviderError) as ei:
        await model.complete(ChatRequest.of("hi"))
    assert len(seen) == 1
    assert ei.value.status == status and ei.value.retryable
    assert ei.value.retry_after == 7.0


async def test_connection_failure_is_one_attempt_and_a_clear_error():
    def refuse(r: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    model, seen = _client(refuse)
    with pytest.raises(EndpointUnreachable, match="cannot reach model endpoint"):
        await model.stream_text(ChatRequest.of("hi"))
    assert len(seen) == 1


async def test_unknown_model_and_quota_errors():
    model, _ = _client(
        lambda r: httpx.Response(
            404,
            json={"error": {"message": "The model `m` does not exist", "code": "model_not_found"}},
        )
    )
    with pytest.raises(UnknownModel, match="does not serve model 'm'"):
        await model.complete(ChatRequest.of("hi"))
    model, _ = _client(
        lambda r: httpx.Response(
            429, json={"error": {"message": "quota", "code": "insufficient_quota"}}
        )
    )
    with pytest.raises(ProviderError) as ei:
        await model.complete(ChatRequest.of("hi"))
    assert not ei.value.retryable
