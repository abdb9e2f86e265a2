"""Data that crosses the model-client boundary: requests, results, events.

All frozen: a request is a value that a retry layer may send again, and a
result is a record that metrics and reports keep.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar

from pydantic import BaseModel

from agentrt._errors import StructuredOutputError
from agentrt.llm._structured import schema_of

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "CallTiming",
    "ChatRequest",
    "ChatResult",
    "Completed",
    "Message",
    "RequestOptions",
    "StreamEvent",
    "TextDelta",
    "Usage",
]

Role = Literal["system", "user", "assistant"]
_Out = TypeVar("_Out", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str


class RequestOptions(TypedDict, total=False):
    """:class:`ChatRequest`'s fields besides ``messages``, as keyword arguments."""

    model: str | None
    max_tokens: int
    temperature: float
    json_schema: dict[str, Any] | None
    stage: str | None
    seed: int | None
    output_type: type[BaseModel] | None


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat completion call.

    ``output_type`` (a pydantic model class) asks for structured output:
    the backend constrains or instructs the model with its JSON schema
    (``json_schema``, derived from it), and the client validates the answer
    into an instance, read back with :meth:`ChatResult.output`. A bare
    ``json_schema`` without a type is checked only as JSON of the schema's
    top-level shape. ``stage`` names the pipeline stage the call belongs to, for metrics;
    when ``None`` the stage of the surrounding :func:`agentrt.metrics.stage`
    block is used.
    """

    messages: tuple[Message, ...]
    model: str | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    json_schema: dict[str, Any] | None = None
    stage: str | None = None
    seed: int | None = None
    output_type: type[BaseModel] | None = None

    def __post_init__(self) -> None:
        if self.output_type is not None and self.json_schema is None:
            # frozen: set once, here, from the type (the one source of the schema)
            object.__setattr__(self, "json_schema", schema_of(self.output_type))

    @classmethod
    def of(
        cls, prompt: str, *, system: str | None = None, **kw: Unpack[RequestOptions]
    ) -> ChatRequest:
        msgs: list[Message] = []
        if system:
            msgs.append(Message("system", system))
        msgs.append(Message("user", prompt))
        return cls(messages=tuple(msgs), **kw)


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True, slots=True)
class CallTiming:
    """Where one call's time went, in seconds of the client's clock.

    ``queue_wait_s``: waiting for the client's own concurrency permit before
    the request was sent. ``ttft_s``: from sending to the first output token
    (``None`` when the backend gave no way to see it, e.g. a non-streaming
    HTTP call). ``decode_tps``: output tokens per second after the first
    token, where a token stream showed the first token: the client's
    stream, or the backend's own (llama.cpp generates in-process token by
    token; the fake model knows its TTFT). ``None`` for a non-streamed
    HTTP call: its tokens arrive together, so nothing measures decoding.
    ``output_tps``: output tokens over the time from sending to the end,
    TTFT included — the rate a caller got, not the model's decode rate.
    ``wall_s``: from the call's start, queue wait included, to its end.
    """

    queue_wait_s: float = 0.0
    ttft_s: float | None = None
    decode_tps: float | None = None
    wall_s: float = 0.0
    output_tps: float | None = None


@dataclass(frozen=True, slots=True)
class ChatResult:
    text: str
    model: str
    usage: Usage
    timing: CallTiming
    finish_reason: str | None = None
    # an instance of the request's output_type; the decoded JSON for a bare schema
    parsed: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    def output(self, kind: type[_Out]) -> _Out:
        """The structured answer as the ``kind`` the request asked for."""
        if not isinstance(self.parsed, kind):
            raise StructuredOutputError(
                f"model {self.model!r} gave no {kind.__name__} (the request asked for "
                f"{type(self.parsed).__name__ if self.parsed is not None else 'no type'})"
            )
        return self.parsed


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of streamed output text."""

    text: str


@dataclass(frozen=True, slots=True)
class Completed:
    """The last event of a stream: the whole result with usage and timing."""

    result: ChatResult


StreamEvent = TextDelta | Completed
