"""A circuit breaker: stop sending to an endpoint that is down, probe it, come back.

Closed, it passes calls and keeps the outcomes of the last ``window``
attempts; when at least ``min_calls`` of them are known, spanning at least
``min_span_s`` seconds, and the failure share reaches ``failure_ratio`` it
opens. (Failures come back faster than successes: in the first instant of
a 50% brownout nearly every known outcome is a failure, which is not what
the endpoint is doing.) Open, it refuses calls for
``open_s`` (so a fallback endpoint or model takes them); then half-open, it
lets ``probes`` calls through: if they succeed it closes, if one fails it
opens again for twice as long (up to ``max_open_s``).

The defaults open only on an endpoint that is failing nearly everything: a
partial brownout is the retry budget's and the throttle's business, and
opening on it would turn a 50% failure rate into a 100% one.
"""

from __future__ import annotations

import collections
from typing import Literal

from agentrt._errors import ProviderError

__all__ = ["BreakerState", "CircuitBreaker", "CircuitOpen"]

BreakerState = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    """Sans-IO: ``allow(now)`` before an attempt, ``record(now, ok=)`` after it."""

    def __init__(
        self,
        *,
        window: int = 50,
        min_calls: int = 20,
        failure_ratio: float = 0.8,
        open_s: float = 10.0,
        max_open_s: float = 120.0,
        probes: int = 1,
        min_span_s: float = 1.0,
    ) -> None:
        self.window = window
        self.min_calls = min_calls
        self.failure_ratio = failure_ratio
        self.base_open_s = open_s
        self.max_open_s = max_open_s
        self.probes = probes
        self.min_span_s = min_span_s
        self.state: BreakerState = "closed"
        self.opened_at = 0.0
        self.open_s = open_s
        self.opens = 0
        # (when, ok) of the last ``window`` attempts
        self._outcomes: collections.deque[tuple[float, bool]] = collections.deque(maxlen=window)
        self._probing = 0
        self._probe_ok = 0
        # each half-open period is numbered, so a probe cancelled late can
        # only free a slot of the period that lent it
        self.episode = 0

    @property
    def probing(self) -> int:
        """Probes out in the current half-open period."""
        return self._probing if self.state == "half_open" else 0

    def _open(self, now: float, *, again: bool) -> None:
        self.state = "open"
        self.opened_at = now
        self.open_s = min(self.max_open_s, self.open_s * 2) if again else self.base_open_s
        self.opens += 1
        self._outcomes.clear()

    def retry_in(self, now: float) -> float:
        """Seconds until an open breaker lets a probe through (0 when not open)."""
        if self.state != "open":
            return 0.0
        return max(0.0, self.opened_at + self.open_s - now)

    def allow(self, now: float) -> bool:
        """Whether an attempt may go out now; a half-open breaker counts its probes."""
        if self.state == "open":
            if now < self.opened_at + self.open_s:
                return False
            self.state = "half_open"
            self.episode += 1
            self._probing = 0
            self._probe_ok = 0
        if self.state == "half_open":
            if self._probing >= self.probes:
                return False
            self._probing += 1
        return True

    def record(self, now: float, *, ok: bool) -> None:
        if self.state == "half_open":
            if not ok:
                self._open(now, again=True)
                return
            self._probe_ok += 1
            if self._probe_ok >= self.probes:
                self.state = "closed"
                self.open_s = self.base_open_s
                self._outcomes.clear()
            return
        if self.state == "open":
            return  # a straggler sent before the breaker opened
        self._outcomes.append((now, ok))
        n = len(self._outcomes)
        # Only a failure can open the breaker: a success is the endpoint
        # recovering, even when older failures still fill the window.
        if not ok and n >= self.min_calls and now - self._outcomes[0][0] >= self.min_span_s:
            failures = sum(1 for _, good in self._outcomes if not good)
            if failures / n >= self.failure_ratio:
                self._open(now, again=False)

    def cancel_probe(self, episode: int | None = None) -> None:
        """A half-open probe ended without an outcome (cancelled, paced): free its slot.

        ``episode`` is the half-open period the probe was let through in;
        a probe of an earlier period has no slot left to free.
        """
        if episode is not None and episode != self.episode:
            return
        if self.state == "half_open" and self._probing > 0:
            self._probing -= 1


class CircuitOpen(ProviderError):
    """The endpoint's breaker is open: the call was not sent."""

    def __init__(self, name: str, retry_in: float) -> None:
        super().__init__(
            f"endpoint {name!r} is failing; its circuit is open for {retry_in:.1f} s more",
            status=None,
            code="circuit_open",
            retryable=False,
        )
