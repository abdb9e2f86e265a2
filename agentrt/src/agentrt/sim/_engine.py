"""The capacity model of the simulated provider, independent of HTTP.

:class:`SimEngine` decides what happens to one request and when: rate
limits and injected faults at arrival, a slot (FIFO queue behind ``slots``),
prefill until TTFT, then decode in token batches at the shared per-stream
rate. It reports what happens as events to a sink, so the HTTP layer only
translates events into bytes, and benchmarks can read :meth:`SimEngine.stats`.
Time comes from an injected :class:`~agentrt._clock.Clock`; every random
decision comes from one RNG seeded by the profile, drawn a fixed number of
times per request, so the same seed and request sequence give the same run.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import math
import random
from dataclasses import dataclass, field

from agentrt._clock import Clock, SystemClock
from agentrt._json import JsonValue
from agentrt.llm._responder import DefaultResponder, Responder, ResponderInput, cut_short
from agentrt.sim._events import (
    Abort,
    Begin,
    Event,
    Finish,
    Reject,
    SimRequest,
    Sink,
    Tokens,
    error_body,
    split_tokens,
)
from agentrt.sim._limits import RateLimiter
from agentrt.sim._prefix_cache import PrefixCache
from agentrt.sim._profile import FAULT_KINDS, SimProfile
from agentrt.sim._served import Served
from agentrt.tokens._counting import EstimateCounter

__all__ = ["SimEngine"]

_CREATED_EPOCH = 1_700_000_000


@dataclass(frozen=True, slots=True)
class _Ctx:
    input_tokens: int
    headers: dict[str, str]
    queued_at: float


@dataclass(slots=True)
class _Stats:
    requests: int = 0
    completed: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    peak_active: int = 0
    peak_queued: int = 0
    rejected: collections.Counter[str] = field(default_factory=collections.Counter)
    faults: collections.Counter[str] = field(default_factory=collections.Counter)
    cancelled: int = 0


class SimEngine:
    """Admission, latency and faults of one simulated provider.

    ``run(request, sink)`` serves one request to its end, awaiting ``sink``
    for each event; cancelling it (client gone) frees the slot. Requests
    wait for a slot in arrival order; the per-stream decode rate is
    recomputed at every token batch from the streams decoding right then.
    """

    def __init__(
        self,
        profile: SimProfile,
        *,
        clock: Clock | None = None,
        responder: Responder | None = None,
    ) -> None:
        self.profile = profile
        self.clock: Clock = clock or SystemClock()
        self.responder: Responder = responder or DefaultResponder()
        self.limiter = RateLimiter(profile.rpm, profile.tpm, self.clock)
        self._rng = random.Random(profile.seed)
        self._counter = EstimateCounter()
        self._t0 = self.clock.now()
        self._ids = itertools.count(1)
        self._active = 0  # requests holding a slot
        self._decoding = 0  # of those, the ones past TTFT
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._stats = _Stats()
        self.served: list[Served] = []  # every request, in arrival order
        self.prefix_cache = (
            PrefixCache(profile.prefix_cache_tokens, profile.prefix_block_tokens)
            if profile.prefix_cache_tokens
            else None
        )
        self._lanes = asyncio.Semaphore(profile.prefill_lanes) if profile.prefill_lanes else None

    # -- introspection ----------------------------------------------------
    @property
    def active(self) -> int:
        return self._active

    @property
    def queued(self) -> int:
        return sum(1 for w in self._waiters if not w.done())

    def elapsed(self) -> float:
        """Simulator seconds since the engine was created (the fault-window axis)."""
        return self.clock.now() - self._t0

    def stats(self) -> dict[str, JsonValue]:
        """A JSON-able snapshot of counters, for benchmarks and ``/sim/stats``."""
        s = self._stats
        return {
            "profile": self.profile.name,
            "elapsed_s": self.elapsed(),
            "active": self._active,
            "decoding": self._decoding,
            "queued": self.queued,
            "requests": s.requests,
            "completed": s.completed,
            "cancelled": s.cancelled,
            "rejected": dict(s.rejected),
            "rejected_total": sum(s.rejected.values()),
            "faults": dict(s.faults),
            "faults_total": sum(s.faults.values()),
            "tokens_in": s.tokens_in,
            "tokens_out": s.tokens_out,
            "tokens_cached": s.tokens_cached,
            "peak_active": s.peak_active,
            "peak_queued": s.peak_queued,
        }

    # -- the model --------------------------------------------------------
    def input_tokens(self, req: SimRequest) -> int:
        return self._counter.count_messages(content for _, content in req.messages)

    def contention_factor(self) -> float:
        p = self.profile
        return 1.0 + p.contention * max(0, self._active - p.contention_onset)

    def ttft(self, input_tokens: int) -> float:
        p = self.profile
        return (p.ttft_base_s + input_tokens * p.prefill_s_per_token) * self.contention_factor()

    def stream_rate(self, streaming: bool) -> float:
        """Tokens per second one stream decodes at, given the current load."""
        p = self.profile
        rate = p.decode_tps
        if p.aggregate_tps is not None:
            rate = min(rate, p.aggregate_tps / max(1, self._decoding))
        rate /= self.contention_factor()
        if streaming:
            rate /= 1.0 + p.stream_overhead
        return rate

    def _draw_fault(self, req: SimRequest) -> tuple[str | None, float]:
        """Two draws per request, always, so later requests see the same RNG state."""
        u, v = self._rng.random(), self._rng.random()
        window = self.profile.fault_window
        if window is not None and not window[0] <= self.elapsed() < window[1]:
            return None, v
        acc = 0.0
        for kind in FAULT_KINDS:
            acc += self.profile.faults.rate(kind)
            if u < acc:
                if kind == "malformed_json" and req.json_schema is None:
                    return None, v
                if kind == "stream_cut" and not req.stream:
                    return "reset", v
                return kind, v
        return None, v

    # -- serving ----------------------------------------------------------
    async def run(self, req: SimRequest, sink: Sink) -> None:
        """Serve ``req``, reporting each step to ``sink`` and to :attr:`served`."""
        seq = next(self._ids)
        entry = Served(seq, self.elapsed(), req.stream)
        self.served.append(entry)

        async def noting(ev: Event) -> None:
            _note(entry, ev, self.elapsed())
            await sink(ev)

        try:
            await self._run(req, seq, noting)
        except asyncio.CancelledError:
            entry.status, entry.ended_at = "cancelled", self.elapsed()
            raise

    async def _run(self, req: SimRequest, seq: int, sink: Sink) -> None:
        self._stats.requests += 1
        if req.model not in self.profile.models:
            self._stats.rejected["model_not_found"] += 1
            msg = f"The model `{req.model}` does not exist or you do not have access to it."
            body = error_body(msg, "invalid_request_error", "model_not_found")
            await sink(Reject(404, body, {}, "model_not_found"))
            return
        input_tokens = self.input_tokens(req)
        fault, where = self._draw_fault(req)
        early = self._early_fault(fault)
        if early is not None:
            self._stats.faults[early.kind] += 1
            await sink(early)
            return
        decision = self.limiter.check(input_tokens + req.max_tokens)
        if decision.limited is not None:
            self._stats.rejected["rate_limited"] += 1
            body = error_body(decision.message, decision.limited, "rate_limit_exceeded")
            headers = {**decision.headers, **decision.extra}
            await sink(Reject(429, body, headers, "rate_limited"))
            return
        max_queue = self.profile.max_queue
        full = self._active >= self.profile.slots
        if max_queue is not None and full and self.queued >= max_queue:
            self._stats.rejected["queue_full"] += 1
            await sink(_overloaded("queue_full", decision.headers))
            return
        ctx = _Ctx(input_tokens, decision.headers, self.clock.now())
        await self._acquire()
        self._stats.tokens_in += input_tokens
        try:
            await self._serve(req, seq, fault, where, ctx, sink)
        except asyncio.CancelledError:
            self._stats.cancelled += 1
            raise
        finally:
            self._release()

    def _early_fault(self, fault: str | None) -> Reject | None:
        if fault == "quota_exhausted":
            msg = "You exceeded your current quota, please check your plan and billing details."
            body = error_body(msg, "insufficient_quota", "insufficient_quota")
            return Reject(429, body, {}, fault)
        if fault == "rate_limited_429":
            wait = self.profile.faults.retry_after_s
            msg = f"Rate limit reached for requests. Please try again in {wait:g}s."
            body = error_body(msg, "requests", "rate_limit_exceeded")
            headers = {
                "retry-after": str(max(1, math.ceil(wait))),
                "retry-after-ms": f"{wait * 1000:.0f}",
            }
            return Reject(429, body, headers, fault)
        if fault == "error_500":
            body = error_body(
                "The server had an error while processing your request.",
                "server_error",
                "internal_error",
            )
            return Reject(500, body, {}, fault)
        if fault == "error_503":
            body = error_body(
                "The engine is currently overloaded, please try again later.",
                "service_unavailable",
                "service_unavailable",
            )
            return Reject(503, body, {}, fault)
        if fault == "overloaded_529":
            return _overloaded(fault, {})
        return None

    async def _serve(
        self, req: SimRequest, seq: int, fault: str | None, where: float, ctx: _Ctx, sink: Sink
    ) -> None:
        started = self.clock.now()
        if fault == "stall":
            self._stats.faults["stall"] += 1
            await self.clock.sleep(self.profile.faults.stall_s)
        cached = await self._prefill(req, ctx.input_tokens)
        if fault == "reset":
            self._stats.faults["reset"] += 1
            await sink(Abort("reset"))
            return
        pieces, finish = self._answer(req, fault)
        meta = {
            **ctx.headers,
            "x-request-id": f"req_sim{seq:08d}",
            "x-sim-queue-s": f"{started - ctx.queued_at:.6f}",
            "x-sim-ttft-s": f"{self.clock.now() - started:.6f}",
        }
        created = _CREATED_EPOCH + int(self.elapsed())
        await sink(Begin(f"chatcmpl-sim{seq:08d}", created, meta))
        # the first token arrives at exactly TTFT; the others at the decode rate
        cut_at = 1 + int(where * (len(pieces) - 1)) if fault == "stream_cut" else None
        interval = self.profile.min_event_interval_s * self.profile.time_scale
        self._decoding += 1
        # Token batches are scheduled against absolute due times, so late
        # wake-ups of a busy event loop do not accumulate into a slower rate.
        due = self.clock.now()
        try:
            sent = 0
            while sent < len(pieces):
                if sent == 1:
                    # let streams that reached TTFT at this same instant register
                    # before the shared rate is first computed
                    await asyncio.sleep(0)
                if sent:
                    rate = self.stream_rate(req.stream)
                    k = min(len(pieces) - sent, max(1, int(interval * rate)))
                    due += k / rate
                    await self.clock.sleep(due - self.clock.now())
                else:
                    k = 1 if pieces else 0
                batch = pieces[sent : sent + k]
                sent += k
                self._stats.tokens_out += k
                await sink(Tokens("".join(batch), k))
                if cut_at is not None and sent >= cut_at:
                    self._stats.faults["stream_cut"] += 1
                    await sink(Abort("cut"))
                    return
        finally:
            self._decoding -= 1
        self._stats.completed += 1
        await sink(Finish(finish, ctx.input_tokens, len(pieces), cached))

    async def _prefill(self, req: SimRequest, input_tokens: int) -> int:
        """Wait out the prefill; return the prompt tokens the prefix cache served."""
        cache = self.prefix_cache
        if self._lanes is None:
            cached = cache.lookup(req.messages, input_tokens) if cache else 0
            await self.clock.sleep(self.ttft(input_tokens - cached))
        else:
            await self.clock.sleep(self.ttft(0))  # the fixed part runs outside the lanes
            async with self._lanes:
                cached = cache.lookup(req.messages, input_tokens) if cache else 0
                per_token = self.profile.prefill_s_per_token * self.contention_factor()
                await self.clock.sleep((input_tokens - cached) * per_token)
        if cache is not None:
            cache.insert(req.messages)  # computed now, so later requests can reuse it
        self._stats.tokens_cached += cached
        return cached

    def _answer(self, req: SimRequest, fault: str | None) -> tuple[list[str], str]:
        seed = req.seed if req.seed is not None else self.profile.seed
        text = self.responder(ResponderInput(req.messages, req.max_tokens, req.json_schema, seed))
        if fault == "malformed_json":
            self._stats.faults["malformed_json"] += 1
            text = cut_short(text)
        pieces = split_tokens(text)
        if len(pieces) > req.max_tokens:
            return pieces[: req.max_tokens], "length"
        return pieces, "stop"

    async def _acquire(self) -> None:
        if self._active < self.profile.slots and not self.queued:
            self._take()
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        self._stats.peak_queued = max(self._stats.peak_queued, self.queued)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self._release()  # the slot was handed to us as we were cancelled
            raise

    def _take(self) -> None:
        self._active += 1
        self._stats.peak_active = max(self._stats.peak_active, self._active)

    def _release(self) -> None:
        self._active -= 1
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                self._take()
                fut.set_result(None)
                break


def _overloaded(kind: str, headers: dict[str, str]) -> Reject:
    """529 with a body both OpenAI- and Anthropic-shaped clients can read."""
    body = error_body("Overloaded", "overloaded_error", "overloaded", type="error")
    return Reject(529, body, headers, kind)


def _note(entry: Served, ev: Event, now: float) -> None:
    """Fold one event of a response into the request's record."""
    if isinstance(ev, Reject):
        entry.status, entry.fault, entry.ended_at = ev.status, ev.kind, now
    elif isinstance(ev, Begin):
        entry.status = 200
    elif isinstance(ev, Tokens):
        if entry.first_token_at is None:
            entry.first_token_at = now
        entry.output_tokens += ev.count
    elif isinstance(ev, Finish):
        entry.ended_at = now
        entry.input_tokens = ev.prompt_tokens
    elif isinstance(ev, Abort):
        entry.status, entry.fault, entry.ended_at = "aborted", ev.kind, now
