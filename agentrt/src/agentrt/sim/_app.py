"""The OpenAI-compatible HTTP face of the simulator (a Starlette ASGI app).

The app parses requests, hands them to a :class:`~agentrt.sim._engine.SimEngine`
and writes the engine's events as OpenAI wire format: one JSON body, or SSE
``chat.completion.chunk`` events ending in ``data: [DONE]``. Bytes are sent
as the engine produces them, so a streaming client sees the first token at
TTFT. Being plain ASGI, it runs in-process (see
:class:`~agentrt.sim._transport.StreamingASGITransport`) or under uvicorn.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from agentrt._clock import Clock, ScaledClock
from agentrt._json import JsonValue
from agentrt.llm._responder import Responder
from agentrt.sim._engine import SimEngine
from agentrt.sim._events import Begin, Event, Finish, Reject, SimRequest, Tokens, error_body
from agentrt.sim._profile import SimProfile

__all__ = ["SimulatedReset", "create_app", "parse_request"]


class SimulatedReset(ConnectionResetError):
    """Raised by the app, after the response started, to make the connection drop."""


class BadRequest(Exception):
    """A request the simulator refuses with 400, like the real API would."""


def _text_of(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    raise BadRequest("message content must be a string or a list of content parts")


def _schema_of(response_format: object) -> dict[str, Any] | None:
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_schema":
        spec = response_format.get("json_schema") or {}
        schema = spec.get("schema") if isinstance(spec, dict) else None
        return schema if isinstance(schema, dict) else {"type": "object"}
    if kind == "json_object":
        return {"type": "object"}
    return None


def parse_request(payload: object, default_max_tokens: int) -> tuple[SimRequest, bool]:
    """Wire JSON → (request, include_usage); raises BadRequest with the reason."""
    if not isinstance(payload, dict):
        raise BadRequest("request body must be a JSON object")
    model = payload.get("model")
    if not isinstance(model, str) or not model:
        raise BadRequest("'model' is required")
    messages = payload.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty array")
    parsed: list[tuple[str, str]] = []
    for m in messages:
        if not isinstance(m, dict):
            raise BadRequest("each message must be an object")
        parsed.append((str(m.get("role", "user")), _text_of(m.get("content"))))
    max_tokens = payload.get("max_completion_tokens") or payload.get("max_tokens")
    if max_tokens is None:
        max_tokens = default_max_tokens
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise BadRequest("'max_tokens' must be a positive integer")
    seed = payload.get("seed")
    stream = bool(payload.get("stream", False))
    options = payload.get("stream_options") or {}
    include_usage = stream and isinstance(options, dict) and bool(options.get("include_usage"))
    req = SimRequest(
        model=model,
        messages=tuple(parsed),
        max_tokens=max_tokens,
        stream=stream,
        json_schema=_schema_of(payload.get("response_format")),
        seed=seed if isinstance(seed, int) else None,
    )
    return req, include_usage


def _sse(obj: JsonValue) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def _raw_headers(
    headers: dict[str, str], content_type: str, length: int | None = None
) -> list[tuple[bytes, bytes]]:
    out = [(b"content-type", content_type.encode())]
    if length is not None:
        out.append((b"content-length", str(length).encode()))
    out.extend((k.lower().encode(), v.encode()) for k, v in headers.items())
    return out


class _CompletionResponse(Response):
    """Runs one request on the engine, writing events as they happen.

    A task watches ``receive`` for the client going away and cancels the
    work, so an abandoned request frees its slot as it would on a server.
    """

    def __init__(self, engine: SimEngine, req: SimRequest, include_usage: bool) -> None:
        self.engine = engine
        self.req = req
        self.include_usage = include_usage
        self.status_code = 200
        self.background = None
        self._started = False
        self._begin: Begin | None = None
        self._text: list[str] = []
        self._send: Send | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        task = asyncio.current_task()
        assert task is not None
        gone = False

        async def watch() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            gone = True
            task.cancel()

        watcher = asyncio.create_task(watch())
        self._send = send
        try:
            await self.engine.run(self.req, self._on_event)
        except asyncio.CancelledError:
            if not gone:
                raise
            task.uncancel()
        finally:
            watcher.cancel()

    def _chunk(self, delta: dict[str, JsonValue], finish: str | None) -> dict[str, JsonValue]:
        assert self._begin is not None
        chunk: dict[str, JsonValue] = {
            "id": self._begin.request_id,
            "object": "chat.completion.chunk",
            "created": self._begin.created,
            "model": self.req.model,
            "system_fingerprint": "fp_agentrt_sim",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if self.include_usage:
            chunk["usage"] = None
        return chunk

    async def _start(self, status: int, headers: list[tuple[bytes, bytes]]) -> None:
        assert self._send is not None
        self._started = True
        await self._send({"type": "http.response.start", "status": status, "headers": headers})

    async def _body(self, data: bytes, more: bool) -> None:
        assert self._send is not None
        await self._send({"type": "http.response.body", "body": data, "more_body": more})

    async def _on_event(self, ev: Event) -> None:
        if isinstance(ev, Reject):
            data = json.dumps(ev.body).encode()
            await self._start(ev.status, _raw_headers(ev.headers, "application/json", len(data)))
            await self._body(data, False)
        elif isinstance(ev, Begin):
            self._begin = ev
            if self.req.stream:
                headers = {**ev.headers, "cache-control": "no-cache"}
                await self._start(200, _raw_headers(headers, "text/event-stream; charset=utf-8"))
        elif isinstance(ev, Tokens):
            if not self.req.stream:
                self._text.append(ev.text)
                return
            delta: dict[str, JsonValue] = {"content": ev.text}
            if not self._text:
                delta = {"role": "assistant", "content": ev.text, "refusal": None}
            self._text.append(ev.text)
            await self._body(_sse(self._chunk(delta, None)), True)
        elif isinstance(ev, Finish):
            await self._finish(ev)
        elif ev.kind == "cut" and self.req.stream:
            await self._body(b"", False)
        else:
            await self._reset()

    def _usage(self, ev: Finish) -> dict[str, JsonValue]:
        return {
            "prompt_tokens": ev.prompt_tokens,
            "completion_tokens": ev.completion_tokens,
            "total_tokens": ev.prompt_tokens + ev.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": ev.cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        }

    async def _finish(self, ev: Finish) -> None:
        assert self._begin is not None
        if self.req.stream:
            out = _sse(self._chunk({}, ev.finish_reason))
            if self.include_usage:
                usage_chunk = self._chunk({}, None)
                usage_chunk["choices"] = []
                usage_chunk["usage"] = self._usage(ev)
                out += _sse(usage_chunk)
            await self._body(out + b"data: [DONE]\n\n", False)
            return
        body = {
            "id": self._begin.request_id,
            "object": "chat.completion",
            "created": self._begin.created,
            "model": self.req.model,
            "system_fingerprint": "fp_agentrt_sim",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": "".join(self._text),
                        "refusal": None,
                    },
                    "logprobs": None,
                    "finish_reason": ev.finish_reason,
                }
            ],
            "usage": self._usage(ev),
        }
        data = json.dumps(body).encode()
        await self._start(200, _raw_headers(self._begin.headers, "application/json", len(data)))
        await self._body(data, False)

    async def _reset(self) -> None:
        """Start a response and drop the connection before its body is complete."""
        if not self._started:
            kind = "text/event-stream" if self.req.stream else "application/json"
            length = None if self.req.stream else 4096
            await self._start(200, _raw_headers({}, kind, length))
        await self._body(b"", True)
        raise SimulatedReset("simulated connection reset")


def _error(status: int, message: str, type_: str, code: str | None) -> JSONResponse:
    return JSONResponse(error_body(message, type_, code), status_code=status)


def create_app(
    profile: SimProfile,
    *,
    clock: Clock | None = None,
    responder: Responder | None = None,
) -> Starlette:
    """The simulator app for ``profile``; ``app.state.engine`` is its SimEngine.

    Without ``clock`` the app runs on ``ScaledClock(profile.time_scale)``;
    tests pass a :class:`~agentrt._clock.FakeClock`.
    """
    engine = SimEngine(profile, clock=clock or ScaledClock(profile.time_scale), responder=responder)

    async def chat(request: Request) -> Response:
        try:
            payload = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "request body is not valid JSON", "invalid_request_error", None)
        try:
            req, include_usage = parse_request(payload, profile.default_max_tokens)
        except BadRequest as exc:
            return _error(400, str(exc), "invalid_request_error", "invalid_request")
        return _CompletionResponse(engine, req, include_usage)

    async def models(request: Request) -> Response:
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "agentrt-sim"}
            for m in profile.models
        ]
        return JSONResponse({"object": "list", "data": data})

    async def stats(request: Request) -> Response:
        return JSONResponse(engine.stats())

    async def not_found(request: Request, exc: Exception) -> Response:
        return _error(404, f"unknown path {request.url.path}", "invalid_request_error", None)

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/sim/stats", stats, methods=["GET"]),
        ],
        exception_handlers={404: not_found},
    )
    app.state.engine = engine
    app.state.profile = profile
    return app
