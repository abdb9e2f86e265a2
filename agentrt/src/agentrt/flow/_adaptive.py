"""Concurrency limits: a static one, and one that finds the knee by itself.

More calls in flight help until a shared bottleneck (decode slots, GPU
batch, KV cache, a CPU) saturates; past that knee throughput stays flat or
falls while every caller waits longer. :class:`AdaptiveLimit` looks for the
knee from the caller's side, with no knowledge of the endpoint:

* **latency gradient (Vegas)** — it keeps the lowest latency per unit of
  work seen (``noload``), and after each window of samples estimates the
  calls queued at the bottleneck as ``limit * (1 - noload / latency)``.
  About zero queued: the endpoint had room, add one permit. Queued calls
  in two windows running (one may be noise): shrink straight to
  ``limit * noload / latency``, the estimated knee;
* **slow start** — from ``initial`` (1, so that ``noload`` is measured
  with nothing else in flight) the limit grows by half per clean window
  until the first sign of a queue;
* **AIMD on refusals** — a 429, 529 or timeout cuts the limit by
  ``backoff`` (0.75) at once, at most once per window;
* **memory of the knee** — a limit that just proved too high is probed
  again only after 2, 4, 8… clean windows, so the limiter sits at the knee
  instead of oscillating across it (as BBR's periodic probing does);
* **no growth while the caller is the bottleneck** — a window in which
  fewer than half the permits were ever in use cannot raise the limit.

Samples are normalised by ``work`` (1 + output tokens is the natural
choice) so that short and long answers can share one latency scale. Pure
state machine: the driver (:class:`~agentrt.flow._limiter.ConcurrencyLimiter`)
feeds it :class:`Sample` values with the clock's time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

__all__ = ["AdaptiveLimit", "LimitAlgorithm", "Sample", "StaticLimit"]


@dataclass(frozen=True, slots=True)
class Sample:
    """One finished call as the limiter saw it.

    ``started_at``: when it took its permit (clock seconds); ``in_flight``:
    permits in use when it took it, itself included; ``dropped``: refused
    or timed out (429/529/timeout), as opposed to answered.
    """

    started_at: float
    latency_s: float
    in_flight: int
    work: float = 1.0
    dropped: bool = False


class LimitAlgorithm(Protocol):
    """What a concurrency limiter asks of its algorithm."""

    @property
    def limit(self) -> int: ...

    def on_sample(self, now: float, sample: Sample) -> int:
        """Learn from one call; return the (possibly new) limit."""
        ...


class StaticLimit:
    """A fixed limit; samples are ignored."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("a concurrency limit is at least 1")
        self._limit = limit

    @property
    def limit(self) -> int:
        return self._limit

    def on_sample(self, now: float, sample: Sample) -> int:
        return self._limit


class AdaptiveLimit:
    """Vegas-style gradient plus AIMD; see the module docstring."""

    def __init__(
        self,
        *,
        initial: int = 1,
        min_limit: int = 1,
        max_limit: int = 256,
        backoff: float = 0.75,
        tolerance: float = 0.05,
        min_queue: float = 0.5,
        min_window: int = 5,
        max_probe_windows: int = 32,
    ) -> None:
        if not 1 <= min_limit <= initial <= max_limit:
            raise ValueError("need 1 <= min_limit <= initial <= max_limit")
        self.min_limit = min_limit
        self.max_limit = max_limit
        self.backoff = backoff
        self.tolerance = tolerance
        self.min_queue = min_queue
        self.min_window = min_window
        self.max_probe_windows = max_probe_windows
        self._limit = initial
        self.noload: float | None = None  # lowest latency per unit of work seen
        self.last_latency: float | None = None  # of the last full window, per unit
        self.slow_start = True  # grow by half until the first sign of a queue
        self.bad_limit: int | None = None  # lowest limit known to queue
        self._probe_wait = 2  # clean windows before probing bad_limit again
        self._clean = 0
        self._queued = 0  # consecutive windows that saw a queue
        self._changed_at = -math.inf  # samples that started earlier are stale
        self._drop_guard_until = -math.inf
        self._reset_window()
        self.history: list[tuple[float, int]] = [(0.0, initial)]

    @property
    def limit(self) -> int:
        return self._limit

    def _reset_window(self) -> None:
        self._w_latency = 0.0
        self._w_work = 0.0
        self._w_n = 0
        self._w_peak = 0

    def _set(self, now: float, new: int) -> None:
        new = max(self.min_limit, min(self.max_limit, new))
        if new != self._limit:
            self._limit = new
            self.history.append((now, new))
        self._changed_at = now
        self._reset_window()

    def on_sample(self, now: float, sample: Sample) -> int:
        if sample.dropped:
            # multiplicative decrease, once per window: the refusals of calls
            # sent before the cut say nothing about the new limit
            if sample.started_at >= self._drop_guard_until:
                self.slow_start = False
                self.bad_limit = self._limit
                self._drop_guard_until = now
                self._set(now, min(self._limit - 1, math.floor(self._limit * self.backoff)))
            return self._limit
        if sample.started_at < self._changed_at:
            return self._limit  # measured under an older limit
        self._w_latency += sample.latency_s
        self._w_work += max(sample.work, 1e-9)
        self._w_n += 1
        self._w_peak = max(self._w_peak, sample.in_flight)
        if self._w_n < max(self.min_window, self._limit):
            return self._limit
        self._close_window(now)
        return self._limit

    def _close_window(self, now: float) -> None:
        latency = self._w_latency / self._w_work
        peak = self._w_peak
        self.last_latency = latency
        if self.noload is None or latency < self.noload:
            self.noload = latency
        limit = self._limit
        queue = limit * (1.0 - self.noload / latency)
        if queue > max(self.min_queue, self.tolerance * limit):
            self._queued += 1
            if self._queued < 2 and not self.slow_start:
                # one noisy window is not a queue: look again before cutting
                self._changed_at = now
                self._reset_window()
                return
            # a queue formed: go to the estimated knee and remember this limit
            self._queued = 0
            knee = math.floor(limit * self.noload / latency + 0.5)
            self._probe_wait = (
                min(self.max_probe_windows, self._probe_wait * 2)
                if self.bad_limit is not None and limit >= self.bad_limit
                else 2
            )
            self.bad_limit = limit if self.bad_limit is None else min(self.bad_limit, limit)
            self.slow_start = False
            self._clean = 0
            self._set(now, min(limit - 1, knee))
            return
        self._queued = 0
        if peak * 2 < limit:
            # the caller is the bottleneck: no evidence the endpoint has room
            self._changed_at = now
            self._reset_window()
            return
        if self.bad_limit is not None and limit >= self.bad_limit:
            # a probe at the known-bad limit came out clean: the knee moved up
            self.bad_limit = None
            self._probe_wait = 2
        if self.slow_start:
            self._set(now, max(limit + 1, math.floor(limit * 1.5)))
            return
        if self.bad_limit is not None and limit + 1 >= self.bad_limit:
            self._clean += 1
            if self._clean < self._probe_wait:
                self._changed_at = now
                self._reset_window()
                return
            self._clean = 0
        self._set(now, limit + 1)
