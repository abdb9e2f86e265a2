"""Model clients: one async interface over every backend."""

from agentrt.llm.client import ModelClient, RawResult, check_structured
from agentrt.llm.factory import make_client
from agentrt.llm.fake import FakeModel, provider_error
from agentrt.llm.llama_loader import default_model_path
from agentrt.llm.openai_backend import OpenAIModel, parse_retry_after
from agentrt.llm.protocol import ChatModel
from agentrt.llm.types import (
    CallTiming,
    ChatRequest,
    ChatResult,
    Completed,
    Message,
    StreamEvent,
    TextDelta,
    Usage,
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
    "Usage",
    "check_structured",
    "default_model_path",
    "make_client",
    "parse_retry_after",
    "provider_error",
]
