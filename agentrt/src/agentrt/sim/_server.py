"""Serve the simulator on a real port with uvicorn.

The served simulator runs on ``ScaledClock(profile.time_scale)``, so a
profile with ``time_scale = 10`` answers ten times faster than its model
says while reporting model-time figures. A simulated connection reset is an
exception after the response started, which uvicorn answers by closing the
socket mid-body; the filter below keeps those deliberate resets out of the
error log.
"""

from __future__ import annotations

import logging

import uvicorn

from agentrt._clock import ScaledClock
from agentrt.llm._responder import Responder
from agentrt.sim._app import SimulatedReset, create_app
from agentrt.sim._profile import SimProfile

__all__ = ["serve"]


class _DropSimulatedResets(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, SimulatedReset):
                return False
            exc = exc.__cause__ or exc.__context__
        return True


def serve(
    profile: SimProfile,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    responder: Responder | None = None,
    log_level: str = "warning",
) -> None:
    """Run the simulator until interrupted (blocking)."""
    app = create_app(profile, clock=ScaledClock(profile.time_scale), responder=responder)
    logging.getLogger("uvicorn.error").addFilter(_DropSimulatedResets())
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="off")
    uvicorn.Server(config).run()
