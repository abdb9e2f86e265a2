"""Who hears of a failed stage attempt: the store, where the store decides it.

An attempt fails in two ways: its stage function raised (the runner calls
:meth:`~agentrt.queues.QueueBackend.fail`), or the workers that held it died
until it ran out of deliveries (the store dead-letters it when it is claimed
once more, and no stage function runs). Only the store counts deliveries, so
only the store can say which failure was the last. Code that acts on a job's
end (a stream to close, files to delete) subscribes with
``backend.failures.add(hook)`` instead of counting attempts itself, and hears
of both kinds, each once, from the process whose store call recorded it.
One gap is left: a Redis call whose reply was lost after the store applied it
is retried, finds the failure recorded already, and reports nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agentrt.queues._types import Message, StageState

__all__ = ["OUT_OF_DELIVERIES", "FailureHook", "FailureHooks", "StageFailure"]

_log = logging.getLogger(__name__)

# the reason every backend records when claim() dead-letters a message whose holders all died
OUT_OF_DELIVERIES = "delivered too many times without completing"


@dataclass(frozen=True, slots=True)
class StageFailure:
    """A failed attempt as the store recorded it.

    ``state`` is :attr:`StageState.FAILED` (the message is queued for another
    delivery) or :attr:`StageState.DEAD` (it is dead-lettered: nothing of this
    item runs in this stage again). ``attempt`` is the delivery that failed;
    ``error`` the stage's exception as ``Type: message``, or the store's reason
    when no stage function ran.
    """

    message: Message
    attempt: int
    error: str
    state: StageState

    @property
    def dead(self) -> bool:
        return self.state is StageState.DEAD


FailureHook = Callable[[StageFailure], Awaitable[None]]


class FailureHooks:
    """The hooks of one backend, called in the order they were added.

    A hook runs after the store committed the failure, inside the store call
    that recorded it (``fail`` or ``claim``). A hook that raises is logged and
    the next one still runs: an observer's fault must not stop a worker from
    claiming, and the store's state is already written.
    """

    def __init__(self) -> None:
        self._hooks: list[FailureHook] = []

    def add(self, hook: FailureHook) -> None:
        self._hooks.append(hook)

    async def report(self, failure: StageFailure) -> None:
        for hook in self._hooks:
            try:
                await hook(failure)
            except Exception:
                _log.exception(
                    "a failure hook raised on %s/%s", failure.message.item, failure.message.stage
                )
