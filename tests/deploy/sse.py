"""A client's side of the service's event streams: SSE frames, and following one to its end.

:func:`follow` reconnects as a browser's ``EventSource`` does: after a dropped connection
(the API restarted, Redis restarting under it) it asks again with ``Last-Event-ID``, the
id of the last event it got, and the server resumes after it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass(frozen=True, slots=True)
class Frame:
    """One server-sent event: its ``id`` (None for status and end frames), kind and data."""

    id: int | None
    kind: str
    data: dict[str, Any]


@dataclass
class Followed:
    """What :func:`follow` saw of one job's stream, over every connection."""

    frames: list[Frame] = field(default_factory=list)
    connections: int = 0
    last_id: int | None = None

    @property
    def events(self) -> list[Frame]:
        """The progress events (frames with an id), in the order received."""
        return [f for f in self.frames if f.id is not None]

    @property
    def ended(self) -> str | None:
        """The job's state the stream ended with, or None if it has not ended."""
        ends = [f for f in self.frames if f.kind == "end"]
        return str(ends[-1].data.get("state")) if ends else None


def parse(lines: list[str]) -> Frame | None:
    """The frame of one SSE block (its lines, without the blank line ending it)."""
    fid: int | None = None
    kind, data = "message", ""
    for line in lines:
        if line.startswith(":"):
            continue  # a keep-alive comment
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "id":
            fid = int(value)
        elif name == "event":
            kind = value
        elif name == "data":
            data += value
    return Frame(fid, kind, json.loads(data)) if data else None


async def follow(
    client: httpx.AsyncClient, job: str, key: str, *, retry_s: float = 0.2, attempts: int = 600
) -> Followed:
    """Follow ``job``'s events until the stream's end frame, reconnecting as needed.

    ``attempts`` bounds the connections (each waits for events, so this is no clock).
    """
    seen = Followed()
    for _ in range(attempts):
        headers = {"X-API-Key": key}
        if seen.last_id is not None:
            headers["Last-Event-ID"] = str(seen.last_id)
        try:
            async with client.stream("GET", f"/v1/bugs/{job}/events", headers=headers) as resp:
                if resp.status_code != 200:
                    await resp.aread()
                    await asyncio.sleep(retry_s)  # the API up but not ready (Redis down)
                    continue
                seen.connections += 1
                block: list[str] = []
                async for line in resp.aiter_lines():
                    if line:
                        block.append(line)
                        continue
                    frame = parse(block)
                    block = []
                    if frame is None:
                        continue
                    seen.frames.append(frame)
                    if frame.id is not None:
                        seen.last_id = frame.id
                    if frame.kind == "end":
                        return seen
        except (httpx.TransportError, httpx.RemoteProtocolError):
            pass
        await asyncio.sleep(retry_s)
    return seen
