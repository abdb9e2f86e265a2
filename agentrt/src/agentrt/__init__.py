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

The names are imported when first used (PEP 562): ``from agentrt import
parse_python`` loads ``agentrt._pyast`` alone, not the model clients and the
openai SDK behind ``agentrt.flow``. FixBugs' index parse workers need only
that: each started in 0.78 s with the eager face and starts in 0.22 s
(``python -X importtime -c "import fixbugs.index.worker"``, MEASUREMENTS.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrt._lazy import lazy_face

if TYPE_CHECKING:
    from agentrt._checkpoint import (
        cancel_requests,
        checkpoint,
    )
    from agentrt._clock import (
        Clock,
        FakeClock,
        ScaledClock,
        SystemClock,
    )
    from agentrt._config import (
        EndpointConfig,
        Settings,
        Trust,
        load_settings,
    )
    from agentrt._discovery import (
        is_loopback_host,
    )
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
    from agentrt._pyast import (
        literal_value,
        parse_python,
    )
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
    from agentrt.graph import (
        Graph,
        GraphEvent,
        Node,
        NodeContext,
        gather_map,
        scatter,
        with_deadline,
    )
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
    from agentrt.metrics import (
        CallRecord,
        MetricsRecorder,
        StageStats,
        stage,
    )
    from agentrt.tokens import (
        LatencyModel,
        calibrate,
        estimate_tokens,
        make_plan,
    )

# each public name -> the module that defines it
_WHERE: dict[str, str] = {
    "cancel_requests": "agentrt._checkpoint",
    "checkpoint": "agentrt._checkpoint",
    "Clock": "agentrt._clock",
    "FakeClock": "agentrt._clock",
    "ScaledClock": "agentrt._clock",
    "SystemClock": "agentrt._clock",
    "EndpointConfig": "agentrt._config",
    "Settings": "agentrt._config",
    "Trust": "agentrt._config",
    "load_settings": "agentrt._config",
    "is_loopback_host": "agentrt._discovery",
    "AgentrtError": "agentrt._errors",
    "BudgetExhausted": "agentrt._errors",
    "ConfigError": "agentrt._errors",
    "EndpointUnreachable": "agentrt._errors",
    "ProviderError": "agentrt._errors",
    "StructuredOutputError": "agentrt._errors",
    "UnknownModel": "agentrt._errors",
    "UnknownProfile": "agentrt._errors",
    "UserError": "agentrt._errors",
    "literal_value": "agentrt._pyast",
    "parse_python": "agentrt._pyast",
    "CircuitBreaker": "agentrt.flow",
    "ConcurrencyLimiter": "agentrt.flow",
    "DeadlineExceeded": "agentrt.flow",
    "RetryingModel": "agentrt.flow",
    "RetryPolicy": "agentrt.flow",
    "SpendBudget": "agentrt.flow",
    "client_for_role": "agentrt.flow",
    "fail_after": "agentrt.flow",
    "Graph": "agentrt.graph",
    "GraphEvent": "agentrt.graph",
    "Node": "agentrt.graph",
    "NodeContext": "agentrt.graph",
    "gather_map": "agentrt.graph",
    "scatter": "agentrt.graph",
    "with_deadline": "agentrt.graph",
    "CallTiming": "agentrt.llm",
    "ChatModel": "agentrt.llm",
    "ChatRequest": "agentrt.llm",
    "ChatResult": "agentrt.llm",
    "Completed": "agentrt.llm",
    "FakeModel": "agentrt.llm",
    "Message": "agentrt.llm",
    "ModelClient": "agentrt.llm",
    "OpenAIModel": "agentrt.llm",
    "StreamEvent": "agentrt.llm",
    "TextDelta": "agentrt.llm",
    "Usage": "agentrt.llm",
    "make_client": "agentrt.llm",
    "CallRecord": "agentrt.metrics",
    "MetricsRecorder": "agentrt.metrics",
    "StageStats": "agentrt.metrics",
    "stage": "agentrt.metrics",
    "LatencyModel": "agentrt.tokens",
    "calibrate": "agentrt.tokens",
    "estimate_tokens": "agentrt.tokens",
    "make_plan": "agentrt.tokens",
}


__getattr__, __dir__ = lazy_face("agentrt", _WHERE, globals())


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
