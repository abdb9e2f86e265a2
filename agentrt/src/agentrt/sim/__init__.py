"""The provider simulator: an OpenAI-compatible endpoint that behaves like a real one under load.

Use it in-process in tests (``create_app`` + ``StreamingASGITransport`` on a
``FakeClock``) or as a server (``agentrt sim serve``). Its latency, capacity,
limits and faults come from a :class:`SimProfile`.
"""

from agentrt.sim._app import SimulatedReset, create_app, parse_request
from agentrt.sim._engine import SimEngine
from agentrt.sim._events import SimRequest
from agentrt.sim._inprocess import SimModel, in_process_model
from agentrt.sim._limits import RateLimiter
from agentrt.sim._noisy import AnswerNoise, Draw, NoisyResponder
from agentrt.sim._profile import (
    DEFAULT_MODEL,
    FAULT_KINDS,
    PROFILES,
    FaultRates,
    SimProfile,
    get_profile,
    load_profile_file,
)
from agentrt.sim._responder import DefaultResponder, Responder, ResponderInput
from agentrt.sim._server import serve
from agentrt.sim._thread import serving_in_thread
from agentrt.sim._transport import StreamingASGITransport

__all__ = [
    "DEFAULT_MODEL",
    "FAULT_KINDS",
    "PROFILES",
    "AnswerNoise",
    "DefaultResponder",
    "Draw",
    "FaultRates",
    "NoisyResponder",
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
    "serving_in_thread",
]
