"""agentrt: run LLM agent work the way distributed systems are run.

The runtime never imports the application (``fixbugs``); it offers model
clients over every backend, flow control (limits, one retry budget,
deadlines, breakers), graphs and scatter-gather, token math, and per-call
metrics, all on an injectable clock. Importing it needs only the light core
(httpx, pydantic, openai); the CLI, the simulator, llama.cpp, Redis,
OpenTelemetry, Prometheus and the report charts are extras, imported only
by the modules that use them.

The names below are the runtime's surface; subpackages that are concepts of
their own (``agentrt.llm``, ``agentrt.flow``, ``agentrt.graph``,
``agentrt.queues``, ``agentrt.pipeline``, ``agentrt.sim``, ...) export theirs.
Modules named ``_x`` are implementation and may change without notice.
"""

from agentrt._checkpoint import cancel_requests, checkpoint
from agentrt._clock import Clock, FakeClock, ScaledClock, SystemClock
from agentrt._config import EndpointConfig, Settings, Trust, load_settings
from agentrt._discovery import is_loopback_host
from agentrt._errors import (
    AgentrtError,
    BudgetExhausted,
    ConfigError,
    EndpointUnreachable,
    ProviderError,
    StructuredOutputError,
    UnknownModel,
    UnknownProfile,
    UserError,
)
from agentrt._pyast import literal_value, parse_python
from agentrt.flow import (
    CircuitBreaker,
    ConcurrencyLimiter,
    DeadlineExceeded,
    RetryingModel,
    RetryPolicy,
    SpendBudget,
    client_for_role,
    fail_after,
)
from agentrt.graph import Graph, GraphEvent, Node, NodeContext, gather_map, scatter, with_deadline
from agentrt.llm import (
    CallTiming,
    ChatModel,
    ChatRequest,
    ChatResult,
    Completed,
    FakeModel,
    Message,
    ModelClient,
    OpenAIModel,
    StreamEvent,
    TextDelta,
    Usage,
    make_client,
)
from agentrt.metrics import CallRecord, MetricsRecorder, StageStats, stage
from agentrt.tokens import LatencyModel, calibrate, estimate_tokens, make_plan

__all__ = [
    "AgentrtError",
    "BudgetExhausted",
    "CallRecord",
    "CallTiming",
    "ChatModel",
    "ChatRequest",
    "ChatResult",
    "CircuitBreaker",
    "Clock",
    "Completed",
    "ConcurrencyLimiter",
    "ConfigError",
    "DeadlineExceeded",
    "EndpointConfig",
    "EndpointUnreachable",
    "FakeClock",
    "FakeModel",
    "Graph",
    "GraphEvent",
    "LatencyModel",
    "Message",
    "MetricsRecorder",
    "ModelClient",
    "Node",
    "NodeContext",
    "OpenAIModel",
    "ProviderError",
    "RetryPolicy",
    "RetryingModel",
    "ScaledClock",
    "Settings",
    "SpendBudget",
    "StageStats",
    "StreamEvent",
    "StructuredOutputError",
    "SystemClock",
    "TextDelta",
    "Trust",
    "UnknownModel",
    "UnknownProfile",
    "Usage",
    "UserError",
    "calibrate",
    "cancel_requests",
    "checkpoint",
    "client_for_role",
    "estimate_tokens",
    "fail_after",
    "gather_map",
    "is_loopback_host",
    "literal_value",
    "load_settings",
    "make_client",
    "make_plan",
    "parse_python",
    "scatter",
    "stage",
    "with_deadline",
]
