"""Model clients: one async interface over every backend."""

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
