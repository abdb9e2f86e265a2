"""Model clients: one async interface over every backend.

The names are imported when first used (:mod:`agentrt._lazy`): ``from
agentrt.llm import ChatModel`` loads the interface alone, and the openai SDK
only comes with :class:`OpenAIModel` or :func:`make_client`'s first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrt._lazy import lazy_face

if TYPE_CHECKING:
    from agentrt.llm._client import ModelClient, RawResult, check_structured
    from agentrt.llm._factory import make_client
    from agentrt.llm._fake import FakeModel, provider_error
    from agentrt.llm._llama_loader import default_model_path
    from agentrt.llm._openai_backend import OpenAIModel, parse_retry_after
    from agentrt.llm._protocol import ChatModel, TokenScorer
    from agentrt.llm._structured import schema_of
    from agentrt.llm._types import (
        CallTiming,
        ChatRequest,
        ChatResult,
        Completed,
        Message,
        StreamEvent,
        TextDelta,
        Usage,
    )
    from agentrt.llm._wrapper import (
        WrapperModel,
        find_layer,
        layers,
        max_concurrency,
        token_scorer,
        unwrap,
    )

# each public name -> the module that defines it
_WHERE: dict[str, str] = {
    "ModelClient": "agentrt.llm._client",
    "RawResult": "agentrt.llm._client",
    "check_structured": "agentrt.llm._client",
    "make_client": "agentrt.llm._factory",
    "FakeModel": "agentrt.llm._fake",
    "provider_error": "agentrt.llm._fake",
    "default_model_path": "agentrt.llm._llama_loader",
    "OpenAIModel": "agentrt.llm._openai_backend",
    "parse_retry_after": "agentrt.llm._openai_backend",
    "ChatModel": "agentrt.llm._protocol",
    "TokenScorer": "agentrt.llm._protocol",
    "schema_of": "agentrt.llm._structured",
    "CallTiming": "agentrt.llm._types",
    "ChatRequest": "agentrt.llm._types",
    "ChatResult": "agentrt.llm._types",
    "Completed": "agentrt.llm._types",
    "Message": "agentrt.llm._types",
    "StreamEvent": "agentrt.llm._types",
    "TextDelta": "agentrt.llm._types",
    "Usage": "agentrt.llm._types",
    "WrapperModel": "agentrt.llm._wrapper",
    "find_layer": "agentrt.llm._wrapper",
    "layers": "agentrt.llm._wrapper",
    "max_concurrency": "agentrt.llm._wrapper",
    "token_scorer": "agentrt.llm._wrapper",
    "unwrap": "agentrt.llm._wrapper",
}

__getattr__, __dir__ = lazy_face("agentrt.llm", _WHERE, globals())

__all__ = [
    "CallTiming",
    "ChatModel",
    "ChatRequest",
    "ChatResult",
    "Completed",
    "FakeModel",
    "Message",
    "ModelClient",
    "OpenAIModel",
    "RawResult",
    "StreamEvent",
    "TextDelta",
    "TokenScorer",
    "Usage",
    "WrapperModel",
    "check_structured",
    "default_model_path",
    "find_layer",
    "layers",
    "make_client",
    "max_concurrency",
    "parse_retry_after",
    "provider_error",
    "schema_of",
    "token_scorer",
    "unwrap",
]
