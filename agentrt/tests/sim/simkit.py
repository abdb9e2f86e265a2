"""Helpers for simulator tests: an in-process app on a FakeClock, no sockets."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx

from agentrt._clock import FakeClock
from agentrt.sim import SimProfile, StreamingASGITransport, create_app
from agentrt.sim._responder import Responder

MODEL = "sim-model"


def body(
    content: str = "hello",
    *,
    max_tokens: int = 10,
    stream: bool = False,
    usage: bool = True,
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": MODEL,
        "messages": [{"role": "user", "content": content}],
        "max_tokens": max_tokens,
        **extra,
    }
    if stream:
        out["stream"] = True
        if usage:
            out["stream_options"] = {"include_usage": True}
    return out


@dataclass
class Sim:
    clock: FakeClock
    app: Any
    client: httpx.AsyncClient

    @property
    def engine(self) -> Any:
        return self.app.state.engine

    async def post(self, payload: dict[str, Any]) -> httpx.Response:
        return await self.client.post("/v1/chat/completions", json=payload)

    async def stream(self, payload: dict[str, Any]) -> StreamLog:
        """Run a streaming request; record each SSE event with its fake-clock time."""
        log = StreamLog(sent=self.clock.now())
        async with self.client.stream("POST", "/v1/chat/completions", json=payload) as r:
            log.status = r.status_code
            log.headers = dict(r.headers)
            async for line in r.aiter_lines():
                if not line.startswith("data: "):
                    continue
                data = line[len("data: ") :]
                log.events.append(
                    (self.clock.now(), None if data == "[DONE]" else json.loads(data))
                )
        return log


@dataclass
class StreamLog:
    sent: float
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    events: list[tuple[float, dict[str, Any] | None]] = field(default_factory=list)

    @property
    def chunks(self) -> list[dict[str, Any]]:
        return [e for _, e in self.events if e is not None]

    @property
    def done(self) -> bool:
        return bool(self.events) and self.events[-1][1] is None

    def content_times(self) -> list[float]:
        return [
            t - self.sent
            for t, e in self.events
            if e and e["choices"] and e["choices"][0]["delta"].get("content")
        ]

    @property
    def text(self) -> str:
        return "".join(
            c["choices"][0]["delta"].get("content") or "" for c in self.chunks if c["choices"]
        )

    @property
    def usage(self) -> dict[str, Any] | None:
        found = [c["usage"] for c in self.chunks if c.get("usage")]
        return found[-1] if found else None


SimFactory = Callable[..., AbstractAsyncContextManager[Sim]]


@asynccontextmanager
async def open_sim(profile: SimProfile, responder: Responder | None = None) -> AsyncIterator[Sim]:
    """App, client and an autojumping FakeClock, torn down on exit."""
    clock = FakeClock()
    app = create_app(profile, clock=clock, responder=responder)
    transport = StreamingASGITransport(app)
    async with (
        clock.autojumping(),
        httpx.AsyncClient(transport=transport, base_url="http://sim") as client,
    ):
        yield Sim(clock, app, client)
