"""Requests-per-minute and tokens-per-minute limits, as OpenAI enforces them.

Each limit is a bucket that holds a minute's allowance and refills evenly.
A request takes one request and reserves its input estimate plus
``max_tokens`` from the token bucket; when either bucket is short the
request is refused with the wait that would make it fit. The same
``x-ratelimit-*`` headers go on every answer, so a client can pace itself
before it is ever refused. Times are simulator seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from agentrt._clock import Clock

__all__ = ["Bucket", "LimitDecision", "RateLimiter", "format_duration"]


def format_duration(seconds: float) -> str:
    """OpenAI's reset format: ``250ms``, ``1.5s``, ``2m3s``."""
    if seconds < 1.0:
        return f"{max(0, math.ceil(seconds * 1000))}ms"
    if seconds < 60.0:
        return f"{round(seconds, 3):g}s"
    minutes, rest = divmod(seconds, 60.0)
    return f"{int(minutes)}m{round(rest, 3):g}s"


@dataclass(slots=True)
class Bucket:
    """A token bucket holding at most ``capacity`` that refills it over 60 s."""

    capacity: float
    level: float
    updated: float

    @property
    def per_s(self) -> float:
        return self.capacity / 60.0

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.updated) * self.per_s)
        self.updated = now

    def wait_for(self, amount: float) -> float:
        """Seconds until ``amount`` is available (inf if it never fits)."""
        if amount > self.capacity:
            return math.inf
        missing = amount - self.level
        return 0.0 if missing <= 1e-9 * self.capacity else missing / self.per_s

    def until_full(self) -> float:
        return (self.capacity - self.level) / self.per_s


@dataclass(frozen=True, slots=True)
class LimitDecision:
    """``limited`` names the exhausted limit (None: allowed and reserved)."""

    headers: dict[str, str]
    limited: Literal["requests", "tokens"] | None = None
    retry_after: float | None = None
    message: str = ""
    extra: dict[str, str] = field(default_factory=dict)


class RateLimiter:
    """RPM/TPM buckets; ``None`` for a limit means unlimited."""

    def __init__(self, rpm: int | None, tpm: int | None, clock: Clock) -> None:
        now = clock.now()
        self.clock = clock
        self.requests = Bucket(rpm, rpm, now) if rpm else None
        self.tokens = Bucket(tpm, tpm, now) if tpm else None

    def check(self, tokens: int) -> LimitDecision:
        """Reserve one request and ``tokens`` tokens, or say which limit refuses."""
        now = self.clock.now()
        for b in (self.requests, self.tokens):
            if b is not None:
                b.refill(now)
        waits: list[tuple[float, Literal["requests", "tokens"], float, Bucket]] = []
        if self.requests is not None:
            waits.append((self.requests.wait_for(1), "requests", 1, self.requests))
        if self.tokens is not None:
            waits.append((self.tokens.wait_for(tokens), "tokens", tokens, self.tokens))
        short = [w for w in waits if w[0] > 0]
        if not short:
            for _, _, amount, bucket in waits:
                bucket.level = max(0.0, bucket.level - amount)
            return LimitDecision(self.headers())
        wait, kind, amount, bucket = max(short, key=lambda w: w[0])
        if math.isinf(wait):
            msg = (
                f"Request too large: limit {bucket.capacity:g} {kind} per min, "
                f"requested {amount:g}."
            )
            return LimitDecision(self.headers(), kind, None, msg)
        msg = (
            f"Rate limit reached for {kind} per min: limit {bucket.capacity:g}, "
            f"used {bucket.capacity - bucket.level:.0f}, requested {amount:g}. "
            f"Please try again in {format_duration(wait)}."
        )
        extra = {
            "retry-after": str(max(1, math.ceil(wait))),
            "retry-after-ms": str(max(1, math.ceil(wait * 1000))),
        }
        return LimitDecision(self.headers(), kind, wait, msg, extra)

    def headers(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for name, b in (("requests", self.requests), ("tokens", self.tokens)):
            if b is None:
                continue
            out[f"x-ratelimit-limit-{name}"] = str(int(b.capacity))
            out[f"x-ratelimit-remaining-{name}"] = str(max(0, math.floor(b.level)))
            out[f"x-ratelimit-reset-{name}"] = format_duration(b.until_full())
        return out
