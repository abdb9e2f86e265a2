"""Client-side adaptive throttling (Google SRE book, "Handling Overload").

While a provider keeps refusing, sending it more requests only deepens the
hole. Each client keeps, over a sliding window, how many requests it wanted
to send and how many the provider accepted, and rejects a new request
locally with probability ``max(0, (requests - K * accepts) / (requests + 1))``.
With ``K = 2`` nothing is rejected until more than half the requests fail;
as accepts recover, the rejection probability falls back to zero by itself.
"""

from __future__ import annotations

import collections
import random

from agentrt._errors import ProviderError

__all__ = ["AdaptiveThrottle", "Throttled"]


class AdaptiveThrottle:
    """Sliding-window request/accept counts and the local rejection rule.

    Counts are kept per whole second of the caller's clock in a deque, so a
    window of ``window_s`` seconds costs at most that many entries. Sans-IO:
    the caller passes ``now``.
    """

    def __init__(self, *, k: float = 2.0, window_s: float = 60.0) -> None:
        if k < 1:
            raise ValueError("k must be at least 1")
        self.k = k
        self.window_s = window_s
        # (second, requests, accepts); invariant: seconds strictly increase
        self._buckets: collections.deque[list[float]] = collections.deque()
        self._requests = 0.0
        self._accepts = 0.0

    def _expire(self, now: float) -> None:
        horizon = now - self.window_s
        while self._buckets and self._buckets[0][0] <= horizon:
            _, req, acc = self._buckets.popleft()
            self._requests -= req
            self._accepts -= acc

    def _bucket(self, now: float) -> list[float]:
        sec = float(int(now))
        if not self._buckets or self._buckets[-1][0] != sec:
            self._buckets.append([sec, 0.0, 0.0])
        return self._buckets[-1]

    def reject_probability(self, now: float) -> float:
        self._expire(now)
        return max(0.0, (self._requests - self.k * self._accepts) / (self._requests + 1.0))

    def should_reject(self, now: float, rng: random.Random) -> bool:
        """Decide for one request; a local rejection still counts as a request."""
        p = self.reject_probability(now)
        rejected = p > 0 and rng.random() < p
        if rejected:
            self.record(now, accepted=False)
        return rejected

    def record(self, now: float, *, accepted: bool) -> None:
        """One request's fate: ``accepted`` unless the provider refused or failed it."""
        self._expire(now)
        b = self._bucket(now)
        b[1] += 1
        self._requests += 1
        if accepted:
            b[2] += 1
            self._accepts += 1


class Throttled(ProviderError):
    """Rejected locally by adaptive throttling while the endpoint keeps failing."""

    def __init__(self, name: str, probability: float) -> None:
        super().__init__(
            f"endpoint {name!r} keeps failing; call rejected locally "
            f"(throttling {probability:.0%} of calls)",
            status=None,
            code="throttled",
            retryable=False,
        )
