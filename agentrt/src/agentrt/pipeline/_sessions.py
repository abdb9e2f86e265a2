"""Session capacity: an agent's cost is the context it keeps resident.

A session holds its context from its first model call to its last,
including every wait on a tool in between; capacity is how many such
sessions the hardware (or the account) holds at once, not requests per
second. So the budget admits sessions, and the report puts sessions held
against capacity: halve the resident time and the same budget serves
twice the sessions.

:class:`SessionBudget` is the sans-IO core (admission as a pure state
machine); :class:`SessionGate` drives it on a clock.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass

from agentrt._clock import Clock
from agentrt.llm._protocol import ChatModel
from agentrt.llm._types import ChatRequest, ChatResult
from agentrt.metrics._recorder import percentile

__all__ = ["Session", "SessionBudget", "SessionGate", "SessionReport", "SessionStats"]


class SessionBudget:
    """At most ``capacity`` sessions held at once; the rest wait, first come first served.

    Invariant: ``len(held) <= capacity``, and a job is waiting only while
    the budget is full or someone ahead of it waits.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("session capacity must be at least 1")
        self.capacity = capacity
        self.held: set[str] = set()
        self.waiting: deque[str] = deque()
        self.peak = 0

    def request(self, job: str) -> bool:
        """Admit ``job`` now (True) or put it in line (False)."""
        if len(self.held) < self.capacity and not self.waiting:
            self._hold(job)
            return True
        self.waiting.append(job)
        return False

    def release(self, job: str) -> list[str]:
        """Free ``job``'s slot (or drop it from the line); return the jobs admitted now."""
        if job in self.held:
            self.held.discard(job)
        else:
            with contextlib.suppress(ValueError):
                self.waiting.remove(job)
        admitted = []
        while self.waiting and len(self.held) < self.capacity:
            nxt = self.waiting.popleft()
            self._hold(nxt)
            admitted.append(nxt)
        return admitted

    def _hold(self, job: str) -> None:
        self.held.add(job)
        self.peak = max(self.peak, len(self.held))


@dataclass(frozen=True, slots=True)
class SessionStats:
    """One finished session. ``resident_s``: first model call start to last call end."""

    job: str
    admission_wait_s: float
    resident_s: float
    model_calls: int
    tool_calls: int
    tool_wait_s: float
    peak_context_tokens: int

    @property
    def token_seconds(self) -> float:
        """Context tokens × seconds held: the memory cost of keeping it resident."""
        return self.peak_context_tokens * self.resident_s


@dataclass(frozen=True, slots=True)
class SessionReport:
    capacity: int
    peak_held: int
    sessions: int
    mean_resident_s: float
    p95_resident_s: float
    token_seconds: float

    def sessions_per(self, window_s: float) -> float:
        """Sessions the budget holds over ``window_s`` at the measured resident time."""
        return self.capacity * window_s / self.mean_resident_s if self.mean_resident_s else 0.0


class Session:
    """A held session: make model calls and tool waits through it to measure them."""

    def __init__(self, job: str, clock: Clock, admission_wait_s: float) -> None:
        self.job = job
        self.clock = clock
        self.admission_wait_s = admission_wait_s
        self.first_call: float | None = None
        self.last_call: float | None = None
        self.model_calls = 0
        self.tool_calls = 0
        self.tool_wait_s = 0.0
        self.peak_context_tokens = 0

    async def complete(self, client: ChatModel, request: ChatRequest) -> ChatResult:
        start = self.clock.now()
        if self.first_call is None:
            self.first_call = start
        result = await client.complete(request)
        self.last_call = self.clock.now()
        self.model_calls += 1
        ctx = result.usage.input_tokens + result.usage.output_tokens
        self.peak_context_tokens = max(self.peak_context_tokens, ctx)
        return result

    @contextlib.asynccontextmanager
    async def tool(self) -> AsyncIterator[None]:
        """Time a tool wait; the context stays resident through it."""
        start = self.clock.now()
        try:
            yield
        finally:
            self.tool_calls += 1
            self.tool_wait_s += self.clock.now() - start

    def stats(self) -> SessionStats:
        resident = (
            self.last_call - self.first_call
            if self.first_call is not None and self.last_call is not None
            else 0.0
        )
        return SessionStats(
            self.job,
            self.admission_wait_s,
            resident,
            self.model_calls,
            self.tool_calls,
            self.tool_wait_s,
            self.peak_context_tokens,
        )


class SessionGate:
    """Admits sessions under a :class:`SessionBudget` and keeps their stats."""

    def __init__(self, capacity: int, clock: Clock) -> None:
        self.budget = SessionBudget(capacity)
        self.clock = clock
        self._admit: dict[str, asyncio.Future[None]] = {}
        self.finished: list[SessionStats] = []

    @contextlib.asynccontextmanager
    async def session(self, job: str) -> AsyncIterator[Session]:
        asked = self.clock.now()
        if not self.budget.request(job):
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._admit[job] = fut
            try:
                await fut
            except BaseException:
                self._release(job)
                raise
        s = Session(job, self.clock, self.clock.now() - asked)
        try:
            yield s
        finally:
            self.finished.append(s.stats())
            self._release(job)

    def _release(self, job: str) -> None:
        self._admit.pop(job, None)
        for nxt in self.budget.release(job):
            fut = self._admit.pop(nxt, None)
            if fut is not None and not fut.done():
                fut.set_result(None)

    def report(self) -> SessionReport:
        res = [s.resident_s for s in self.finished]
        return SessionReport(
            capacity=self.budget.capacity,
            peak_held=self.budget.peak,
            sessions=len(res),
            mean_resident_s=sum(res) / len(res) if res else 0.0,
            p95_resident_s=percentile(res, 95) or 0.0,
            token_seconds=sum(s.token_seconds for s in self.finished),
        )
