"""The provider simulator: an OpenAI-compatible endpoint that behaves like a real one under load.

Use it in-process in tests (``create_app`` + ``StreamingASGITransport`` on a
``FakeClock``) or as a server (``agentrt sim serve``). Its latency, capacity,
limits and faults come from a :class:`SimProfile`.
"""

from agentrt.sim.app import SimulatedReset, create_app, parse_request
from agentrt.sim.engine import SimEngine
from agentrt.sim.events import SimRequest
from agentrt.sim.inprocess import SimModel, in_process_model
from agentrt.sim.limits import RateLimiter
from agentrt.sim.profile import (
    DEFAULT_MODEL,
    FAULT_KINDS,
    PROFILES,
    FaultRates,
    SimProfile,
    get_profile,
    load_profile_file,
)
from agentrt.sim.responder import DefaultResponder, Responder, ResponderInput
from agentrt.sim.server import serve
from agentrt.sim.transport import StreamingASGITransport

__all__ = [
    "DEFAULT_MODEL",
    "FAULT_KINDS",
    "PROFILES",
    "DefaultResponder",
    "FaultRates",
    "RateLimiter",
    "Responder",
    "ResponderInput",
    "SimEngine",
    "SimModel",
    "SimProfile",
    "SimRequest",
    "SimulatedReset",
    "StreamingASGITransport",
    "create_app",
    "get_profile",
    "in_process_model",
    "load_profile_file",
    "parse_request",
    "serve",
]
