"""Retry decisions as a pure function, and one retry budget for the whole process.

Retries compound: three SDK retries under three framework re-attempts make
nine calls nobody designed, and during a brownout every layer's retries pile
onto the struggling provider. The rules here follow what Envoy and Google
SRE settled on:

* one retrying layer (ours; the SDKs run with ``max_retries=0``);
* a budget shared by every stage: retries in flight are at most ``share``
  (20%) of the calls in flight, never fewer than ``min_in_flight`` (3), and
  over time at most ``ratio`` (10%) of calls may be retried at all;
* full-jitter exponential backoff, never shorter than ``Retry-After``;
* only what can succeed when repeated is retried (connection errors, 408,
  409, 429, 5xx, 529) — never a quota-exhausted 429 or another 4xx;
* no attempt starts at or after the caller's deadline.

:func:`next_action` is the core, in the spirit of tenacity's ``iter()``: it
looks at one failed attempt and says what to do next (retry after some
delay, or give up and why). The async driver only carries it out.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Literal

from agentrt.errors import ProviderError

__all__ = [
    "GiveUp",
    "RetryAfter",
    "RetryBudget",
    "RetryPolicy",
    "is_retryable",
    "next_action",
]


def is_retryable(exc: BaseException) -> bool:
    """Whether repeating the call may succeed (see :class:`ProviderError`)."""
    if isinstance(exc, ProviderError):
        return exc.retryable
    return isinstance(exc, ConnectionError)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many attempts a call gets and how long to wait between them.

    ``base_s * 2**n`` capped at ``cap_s`` bounds the n-th backoff; the wait
    is drawn uniformly below that bound ("full jitter": retries of many
    callers spread out instead of arriving together).
    """

    max_attempts: int = 4
    base_s: float = 0.5
    cap_s: float = 20.0

    def backoff(self, retry_number: int, rng: random.Random) -> float:
        """Full-jitter wait before retry ``retry_number`` (1 for the first retry)."""
        bound = min(self.cap_s, self.base_s * 2.0 ** (retry_number - 1))
        return rng.uniform(0.0, bound)


@dataclass(frozen=True, slots=True)
class RetryAfter:
    """Retry after ``delay_s`` seconds."""

    delay_s: float


@dataclass(frozen=True, slots=True)
class GiveUp:
    """Stop: ``reason`` says why (for the error and the metrics)."""

    reason: Literal["not_retryable", "attempts", "deadline", "budget"]


Action = RetryAfter | GiveUp


def next_action(
    policy: RetryPolicy,
    *,
    attempts: int,
    error: BaseException,
    now: float,
    deadline: float | None,
    rng: random.Random,
) -> Action:
    """What to do after attempt number ``attempts`` failed with ``error``.

    Pure apart from the draw from ``rng``. The delay is the larger of the
    jittered backoff and the provider's ``Retry-After``; when the retry
    could not start before ``deadline`` the call gives up now rather than
    sleeping towards a deadline it will miss. The retry budget is asked
    last, by the driver, only when this says retry (asking takes from it).
    """
    if not is_retryable(error):
        return GiveUp("not_retryable")
    if attempts >= policy.max_attempts:
        return GiveUp("attempts")
    delay = policy.backoff(attempts, rng)
    retry_after = getattr(error, "retry_after", None)
    if isinstance(retry_after, int | float) and retry_after > delay:
        delay = float(retry_after)
    if deadline is not None and now + delay >= deadline:
        return GiveUp("deadline")
    return RetryAfter(delay)


class RetryBudget:
    """The retry allowance shared by every stage that uses it.

    Two limits, both must allow a retry:

    * in flight (Envoy's retry budget): a retry may start while the retries
      in progress are fewer than ``max(min_in_flight, share * active)``,
      ``active`` being the calls in progress (retries included);
    * over time (Finagle/SRE): every call deposits ``ratio`` into an
      allowance capped at ``burst``, every retry withdraws one, so across a
      run retries are at most ``ratio`` of calls plus ``burst``.

    Plain counters, no I/O or time: the driver calls :meth:`call_started`,
    :meth:`try_retry`, :meth:`retry_finished`, :meth:`call_finished`.
    A :class:`~agentrt.flow.redis_store.RedisRetryBudget` keeps the same
    counters in Redis for many processes.
    """

    def __init__(
        self,
        *,
        share: float = 0.2,
        min_in_flight: int = 3,
        ratio: float = 0.1,
        burst: float = 3.0,
    ) -> None:
        if not 0 <= share <= 1 or not 0 <= ratio <= 1:
            raise ValueError("share and ratio are fractions in [0, 1]")
        self.share = share
        self.min_in_flight = min_in_flight
        self.ratio = ratio
        self.burst = burst
        self.active = 0
        self.retrying = 0
        self.balance = burst
        self.calls = 0
        self.retries = 0
        self.denied = 0

    def in_flight_cap(self) -> int:
        return max(self.min_in_flight, math.floor(self.share * self.active))

    def call_started(self) -> None:
        self.active += 1
        self.calls += 1
        self.balance = min(self.burst, self.balance + self.ratio)

    def call_finished(self) -> None:
        self.active -= 1

    def try_retry(self) -> bool:
        """Take a retry from the budget if both limits allow one."""
        if self.retrying >= self.in_flight_cap() or self.balance < 1.0:
            self.denied += 1
            return False
        self.retrying += 1
        self.retries += 1
        self.balance -= 1.0
        return True

    def retry_finished(self) -> None:
        self.retrying -= 1
