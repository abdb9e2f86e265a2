"""Build the model client for a configured endpoint.

The client for a *role*, wrapped in flow control, is
:func:`agentrt.flow.client_for_role`.
"""

from __future__ import annotations

import os

from agentrt._clock import Clock
from agentrt._config import EndpointConfig
from agentrt.llm._client import ModelClient
from agentrt.metrics._recorder import MetricsRecorder

__all__ = ["make_client"]


def make_client(
    cfg: EndpointConfig,
    *,
    name: str | None = None,
    clock: Clock | None = None,
    recorder: MetricsRecorder | None = None,
) -> ModelClient:
    """A client for one endpoint; backends are imported only when used."""
    key = cfg.resolved_api_key(os.environ)
    if cfg.kind == "llama":
        from agentrt.llm._llama_backend import DEFAULT_N_CTX, LlamaModel

        return LlamaModel(
            cfg.model_path,
            model=cfg.model,
            name=name,
            n_ctx=cfg.n_ctx or DEFAULT_N_CTX,
            chat_format=cfg.chat_format,
            max_concurrency=cfg.max_concurrency or 1,
            clock=clock,
            recorder=recorder,
        )
    if cfg.kind == "anthropic":
        from agentrt.llm._anthropic_backend import AnthropicModel

        return AnthropicModel(
            model=cfg.model,
            api_key=key,
            base_url=cfg.base_url,
            name=name,
            timeout_s=cfg.timeout_s,
            max_concurrency=cfg.max_concurrency,
            clock=clock,
            recorder=recorder,
        )
    from agentrt.llm._openai_backend import OpenAIModel

    return OpenAIModel(
        model=cfg.model,
        base_url=cfg.base_url,
        api_key=key,
        name=name,
        timeout_s=cfg.timeout_s,
        max_concurrency=cfg.max_concurrency,
        clock=clock,
        recorder=recorder,
    )
