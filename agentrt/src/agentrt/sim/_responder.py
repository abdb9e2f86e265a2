"""What the simulated model says: see :mod:`agentrt.llm._responder`.

The responders live with the model clients, so that the fake model does
not import the simulator; the simulator uses them from there.
"""

from agentrt.llm._responder import (
    DefaultResponder,
    Responder,
    ResponderInput,
    cut_short,
    filler_text,
    value_for_schema,
)

__all__ = [
    "DefaultResponder",
    "Responder",
    "ResponderInput",
    "cut_short",
    "filler_text",
    "value_for_schema",
]
