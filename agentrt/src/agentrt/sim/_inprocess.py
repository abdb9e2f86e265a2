"""An OpenAI client wired to an in-process simulator: no port, no network.

Shipped so that users test their agents the way agentrt tests itself: the
real ``openai`` SDK and the real client code, against the simulator's
latency, limits and faults, on a :class:`~agentrt._clock.FakeClock` when the
test wants exact timings.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import httpx
from starlette.applications import Starlette

from agentrt._clock import Clock
from agentrt.llm._openai_backend import OpenAIModel
from agentrt.llm._responder import Responder
from agentrt.metrics._recorder import MetricsRecorder
from agentrt.sim._app import create_app
from agentrt.sim._engine import SimEngine
from agentrt.sim._profile import SimProfile, get_profile
from agentrt.sim._transport import StreamingASGITransport

__all__ = ["SimModel", "in_process_model"]


class SimModel(OpenAIModel):
    """An :class:`OpenAIModel` that also holds the simulator app serving it."""

    app: Starlette

    @property
    def engine(self) -> SimEngine:
        engine: SimEngine = self.app.state.engine
        return engine


@contextlib.asynccontextmanager
async def in_process_model(
    profile: SimProfile | str = "default",
    *,
    clock: Clock | None = None,
    responder: Responder | None = None,
    recorder: MetricsRecorder | None = None,
    max_concurrency: int | None = None,
    model: str | None = None,
) -> AsyncIterator[SimModel]:
    """Yield a client served by a simulator app in this process.

    The simulator and the client share ``clock``; ``client.engine`` exposes
    the simulator's counters.
    """
    prof = get_profile(profile) if isinstance(profile, str) else profile
    app = create_app(prof, clock=clock, responder=responder)
    async with httpx.AsyncClient(
        transport=StreamingASGITransport(app), base_url="http://sim"
    ) as http:
        client = SimModel(
            model=model or prof.models[0],
            base_url="http://sim/v1",
            name=f"sim:{prof.name}",
            http_client=http,
            clock=clock,
            recorder=recorder,
            max_concurrency=max_concurrency,
        )
        client.app = app
        await client.prepare()  # before the caller's fake clock can jump over it
        try:
            yield client
        finally:
            await client.aclose()
