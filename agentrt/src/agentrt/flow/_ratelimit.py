"""Token-aware rate limits, kept on the client so the provider never has to refuse.

Providers limit requests per minute (RPM) and tokens per minute (TPM), and
count a request's tokens *before* serving it: the input plus ``max_tokens``.
:class:`RateBuckets` mirrors that: a call reserves one request and its
token estimate from per-endpoint buckets (each holds a minute's allowance
and refills evenly) and is sent only when both have enough. Afterwards the
reservation is corrected:

* from the usage the provider reported (the input estimate becomes the
  real input count; unused output is refunded only for providers that
  charge actual output: the settled charge is the caller's, see
  :class:`~agentrt.flow.RateLimitedModel`);
* from the provider's own view, ``x-ratelimit-remaining-*`` (OpenAI) or
  ``anthropic-ratelimit-*-remaining`` headers: a bucket never believes it
  holds more than the provider said remained (plus what refilled since);
* from ``Retry-After`` on a 429: nothing is sent before it allows.

Sans-IO: every method takes ``now``; :class:`~agentrt.flow._gate.LocalRateGate`
drives it on a clock, and :mod:`agentrt.flow._redis_store` runs the same
arithmetic atomically in Redis for many processes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = [
    "HeaderView",
    "RateBuckets",
    "Reservation",
    "parse_duration",
    "parse_rate_headers",
]


_DURATION = re.compile(
    r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?"
    r"(?:(\d+(?:\.\d+)?)ms)?$"
)


def parse_duration(text: str) -> float | None:
    """OpenAI's reset format (``250ms``, ``1.5s``, ``2m3s``, ``1h2m``) or bare seconds."""
    text = text.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    m = _DURATION.match(text)
    if not m or not any(m.groups()):
        return None
    h, mi, s, ms = (float(g) if g else 0.0 for g in m.groups())
    return h * 3600 + mi * 60 + s + ms / 1000


@dataclass(frozen=True, slots=True)
class HeaderView:
    """What a provider's rate-limit headers said about its buckets."""

    remaining_requests: float | None = None
    remaining_tokens: float | None = None


def _num(headers: Mapping[str, str], *names: str) -> float | None:
    for name in names:
        value = headers.get(name)
        if value is not None:
            try:
                return float(value)
            except ValueError:
                continue
    return None


def parse_rate_headers(headers: Mapping[str, str]) -> HeaderView:
    """Read OpenAI- or Anthropic-style remaining counts (header names lower-case)."""
    h = {k.lower(): v for k, v in headers.items()}
    return HeaderView(
        remaining_requests=_num(
            h, "x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-remaining"
        ),
        remaining_tokens=_num(
            h,
            "x-ratelimit-remaining-tokens",
            "anthropic-ratelimit-tokens-remaining",
            "anthropic-ratelimit-input-tokens-remaining",
        ),
    )


@dataclass(frozen=True, slots=True)
class Reservation:
    """What one call took from the buckets (to correct it later)."""

    tokens: float
    at: float


@dataclass(slots=True)
class _Bucket:
    capacity: float
    level: float
    updated: float

    def refill(self, now: float) -> None:
        if now > self.updated:
            self.level = min(self.capacity, self.level + (now - self.updated) * self.capacity / 60)
            self.updated = now

    def wait_for(self, amount: float) -> float:
        if amount > self.capacity:
            return math.inf
        return max(0.0, (amount - self.level) * 60 / self.capacity)


class RateBuckets:
    """RPM and TPM buckets of one endpoint; ``None`` means no such limit.

    ``try_reserve`` either takes what a call needs and returns a
    :class:`Reservation`, or takes nothing and returns the seconds until it
    would fit (``inf`` when it never can: the call alone exceeds the TPM).
    """

    def __init__(
        self,
        rpm: int | None,
        tpm: int | None,
        *,
        now: float = 0.0,
    ) -> None:
        self.requests = _Bucket(rpm, rpm, now) if rpm else None
        self.tokens = _Bucket(tpm, tpm, now) if tpm else None
        self.blocked_until = -math.inf

    def _refill(self, now: float) -> None:
        for b in (self.requests, self.tokens):
            if b is not None:
                b.refill(now)

    def try_reserve(self, now: float, tokens: float) -> Reservation | float:
        self._refill(now)
        wait = max(0.0, self.blocked_until - now)
        if self.requests is not None:
            wait = max(wait, self.requests.wait_for(1))
        if self.tokens is not None:
            wait = max(wait, self.tokens.wait_for(tokens))
        if wait > 0:
            return wait
        if self.requests is not None:
            self.requests.level -= 1
        if self.tokens is not None:
            self.tokens.level -= tokens
        return Reservation(tokens, now)

    def settle(self, now: float, reservation: Reservation, charged_tokens: float) -> None:
        """Replace the reservation's estimate by what the provider actually charged."""
        if self.tokens is None:
            return
        self._refill(now)
        # levels may go negative: an underestimate is a debt paid by waiting
        self.tokens.level = min(
            self.tokens.capacity, self.tokens.level + reservation.tokens - charged_tokens
        )

    def cancel(self, now: float, reservation: Reservation) -> None:
        """Give back a reservation whose request was never sent (its caller gave up)."""
        self._refill(now)
        if self.requests is not None:
            self.requests.level = min(self.requests.capacity, self.requests.level + 1)
        if self.tokens is not None:
            self.tokens.level = min(self.tokens.capacity, self.tokens.level + reservation.tokens)

    def observe(self, now: float, view: HeaderView, *, as_of: float) -> None:
        """Never hold more than the provider said remained at ``as_of``, plus refill since."""
        self._refill(now)
        for bucket, remaining in (
            (self.requests, view.remaining_requests),
            (self.tokens, view.remaining_tokens),
        ):
            if bucket is None or remaining is None:
                continue
            refilled = max(0.0, now - as_of) * bucket.capacity / 60
            bucket.level = min(bucket.level, remaining + refilled)

    def block_until(self, until: float) -> None:
        """Honour ``Retry-After``: nothing is reserved before ``until``."""
        self.blocked_until = max(self.blocked_until, until)
