"""FixBugs' stages on agentrt queues: many bugs in flight, a worker pool per stage.

See :mod:`fixbugs.queued.pipeline` for the stages and :mod:`fixbugs.queued.state`
for what one stage hands the next.
"""

from fixbugs.queued.pipeline import (
    QUEUE_STAGES,
    Publish,
    StagedAgent,
    StagedConfig,
    model_slots_for,
)
from fixbugs.queued.spec import BugSpec
from fixbugs.queued.state import decode, encode

__all__ = [
    "QUEUE_STAGES",
    "BugSpec",
    "Publish",
    "StagedAgent",
    "StagedConfig",
    "decode",
    "encode",
    "model_slots_for",
]
