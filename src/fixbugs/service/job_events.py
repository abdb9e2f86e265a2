"""Where the service's workers send a job's progress events, and how readers get them.

In one process, events go straight to the :class:`~.event_hub.EventHub` that
the SSE stream reads. With an event log in the queue's store
(:mod:`fixbugs.queued.event_log`), workers append to it and a relay copies
every followed job's log into the hub, so SSE shows live events of bugs
run by any process. Events are the JSON documents SSE sends.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from fixbugs.queued.event_log import (
    EventChannel,
    EventPump,
    EventRelay,
    failed_event,
    finished_marker,
)
from fixbugs.run.progress import EventSink, ProgressEvent
from fixbugs.service.event_hub import EventHub

__all__ = ["JobEvents"]


class JobEvents:
    """A job's progress, to the hub here or through the queue's event log."""

    def __init__(
        self,
        hub: EventHub,
        channel: EventChannel | None,
        *,
        on_finished: Callable[[str], Awaitable[None]],
    ) -> None:
        """``on_finished`` runs in this process when the relay sees a job's end marker."""
        self.hub = hub
        self.channel = channel
        self.on_finished = on_finished
        self._pump = (
            EventPump(channel, tag={"worker": f"{socket.gethostname()}:{os.getpid()}"})
            if channel is not None
            else None
        )

    def start(self, tg: asyncio.TaskGroup) -> None:
        """With an event log: the tasks that write this process's events and relay everyone's."""
        if self._pump is not None and self.channel is not None:
            tg.create_task(self._pump.run(), name="fixbugs-event-pump")
            relay = EventRelay(self.channel, self.hub, on_finished=self.on_finished)
            tg.create_task(relay.run(), name="fixbugs-relay")

    async def follow(self, job: str) -> None:
        """Have the hub follow ``job``'s log in the queue's event log, if it has none yet.

        A process started after the job was submitted (the API restarted, or
        another API process) holds no events of it. With an event log, the hub
        opens the job and the relay replays its log from the start, in the log's
        order, so each event gets the id any API process gives it: a client
        resuming with ``Last-Event-ID`` misses none. A job with no log there
        (none kept, or expired) is left alone.
        """
        if self.channel is None or self.hub.log(job) is not None:
            return
        if await self.channel.read(job, "0", timeout_s=0.001):
            self.hub.open(job)

    def publish(self, job: str, event: dict[str, Any]) -> None:
        if self._pump is not None:
            self._pump.publish(job, event)  # the relay brings it to the hub
        else:
            self.hub.publish(job, event)

    def sink(self, job: str) -> EventSink:
        """The agent's event sink for ``job``."""

        def sink(ev: ProgressEvent) -> None:
            self.publish(job, ev.to_dict())

        return sink

    def note(self, job: str, message: str) -> None:
        self.publish(
            job, {"kind": "note", "stage": "run", "at_s": 0.0, "message": message, "data": {}}
        )

    def failed(self, job: str, stage: str, error: str, *, final: bool) -> None:
        """Say a run of ``stage`` failed (``error``: ``Type: message``); ``final``: the
        store dead-lettered it."""
        self.publish(job, failed_event(stage, error, final=final))

    def finish(self, job: str) -> None:
        """End the job's stream, after every event it published."""
        if self._pump is None:
            self.hub.finish(job)
        else:  # the relay ends the stream when this marker arrives, after every event
            self._pump.publish(job, finished_marker())
