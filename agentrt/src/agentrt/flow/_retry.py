"""Retry decisions as a pure function, and one retry budget per configuration.

Retries compound: three SDK retries under three framework re-attempts make
nine calls nobody designed, and during a brownout every layer's retries pile
onto the struggling provider. The rules here follow what Envoy, gRPC and
Google SRE settled on:

* one retrying layer (ours; the SDKs run with ``max_retries=0``);
* a budget shared by every stage that is given it (it is scoped by
  configuration, see :func:`agentrt.flow.retry_budget`): retried requests
  out at once are at most ``share`` (20%) of the calls in flight, never
  fewer than ``min_in_flight`` (3) — Envoy's retry budget;
* a steady error rate is retried; a brownout is not: while the recent share
  of failed attempts (``failure_rate``) is at or above ``brownout_ratio``
  (40%), retries are also limited over time to ``ratio`` (2%) of calls plus
  a ``burst`` (1) — the Finagle/SRE budget, applied only when it is needed;
* full-jitter exponential backoff, never shorter than ``Retry-After``;
* only what can succeed when repeated is retried (connection errors, 408,
  409, 429, 5xx, 529) — never a quota-exhausted 429 or another 4xx;
* a 429 with ``Retry-After`` is pacing, not failure: the driver waits and
  sends again without spending from this budget (see ``RetryingModel``);
* no attempt starts at or after the caller's deadline.

:func:`next_action` is the core, in the spirit of tenacity's ``iter()``: it
looks at one failed attempt and says what to do next (retry after some
delay, or give up and why). The async driver only carries it out.
"""

from __future__ import annotations

import collections
import math
import random
from dataclasses import dataclass
from typing import Literal

from agentrt._errors import ProviderError

__all__ = [
    "GiveUp",
    "RetryAfter",
    "RetryBudget",
    "RetryBudgetRules",
    "RetryPolicy",
    "RetryVerdict",
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
    callers spread out instead of arriving together). ``max_attempts``
    counts failed attempts; pacing (429 with ``Retry-After``) and waits for
    a busy budget have their own bounds, and every wait is bounded by the
    caller's deadline.
    """

    max_attempts: int = 4
    base_s: float = 0.5
    cap_s: float = 20.0
    # waits that are not failures: a 429 with Retry-After (pacing), and a
    # retry the budget called "busy" (its in-flight share was taken)
    max_paced: int = 10
    max_busy_waits: int = 8

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


RetryVerdict = Literal["granted", "busy", "refused"]


@dataclass(frozen=True, slots=True)
class RetryBudgetRules:
    """The limits of a :class:`RetryBudget`, wherever its counters are kept.

    ``share`` and ``min_in_flight`` bound the retries out at once;
    ``ratio`` and ``burst`` the retries over time during a brownout, which
    is a failure share of at least ``brownout_ratio`` over about the last
    ``window`` outcomes (once ``min_samples`` are known), or over the last
    ``recent`` for the quick signal.
    """

    share: float = 0.2
    min_in_flight: int = 3
    ratio: float = 0.02
    burst: float = 1.0
    brownout_ratio: float = 0.4
    window: int = 50
    min_samples: int = 10
    recent: int = 10

    def __post_init__(self) -> None:
        fractions = 0 <= self.share <= 1 and 0 <= self.ratio <= 1 and 0 < self.brownout_ratio <= 1
        if not fractions:
            raise ValueError("share, ratio and brownout_ratio are fractions in [0, 1]")
        if self.window < 1 or self.min_samples < 0:
            raise ValueError("window must be at least 1 and min_samples at least 0")


class RetryBudget:
    """The retry allowance shared by every call that is given it.

    Two limits:

    * in flight (Envoy's retry budget), always: a retry may start while the
      retried requests out (asked for after the backoff, held until the
      retried attempt ends) are fewer than
      ``max(min_in_flight, share * active)``, ``active`` being the calls in
      progress. A retry refused here is ``"busy"``: the driver may back off
      and ask again, since a slot frees as soon as a peer's retry ends;
    * over time (Finagle/SRE), only during a brownout: every call deposits
      ``ratio`` into an allowance capped at ``burst`` and each retry granted
      during a brownout withdraws one. A retry refused here is
      ``"refused"`` and the call gives up (as it does when the in-flight
      cap is 0: such a budget never retries).

    A brownout is a recent failure share (an average over about the last
    ``window`` attempt outcomes) at or above ``brownout_ratio``, once
    ``min_samples`` outcomes are known. While fewer than ``window`` are
    known, calls still out count as not failed: failures come back before
    successes. That average is slow to rise when a brownout starts, so a
    quick signal covers the onset: when the last ``recent`` outcomes fail
    as often and enough calls are in flight (:meth:`busy_enough`), a retry
    is ``"busy"`` — it waits a backoff and asks again, by
    when a steady error rate has shown successes again and a brownout has
    raised the average. So a steady 20% of errors is retried in full and a
    50% brownout costs about ``ratio`` extra requests per call.

    Plain counters, no I/O or time: the driver calls :meth:`call_started`,
    :meth:`record` after each attempt that reached the provider,
    :meth:`ask_retry`, :meth:`retry_finished`, :meth:`call_finished`. A
    :class:`~agentrt.flow._redis_store.RedisRetryBudget` keeps the same
    counters in Redis for many processes.
    """

    def __init__(self, rules: RetryBudgetRules | None = None) -> None:
        self.rules = rules or RetryBudgetRules()
        self.active = 0
        self.retrying = 0
        self.balance = self.rules.burst
        self.calls = 0
        self.retries = 0
        self.denied = 0
        self.samples = 0
        self.failures_seen = 0
        self.failure_rate = 0.0
        # the last ``recent`` outcomes (True: failed): the quick signal
        self._recent: collections.deque[bool] = collections.deque(maxlen=self.rules.recent)

    def in_flight_cap(self) -> int:
        return max(self.rules.min_in_flight, math.floor(self.rules.share * self.active))

    def in_brownout(self) -> bool:
        if self.samples < self.rules.min_samples:
            return False
        rate = self.failure_rate
        if self.samples < self.rules.window:
            # warming up: failures come back before successes, so count the
            # calls still out as not failed (yet) rather than not known
            rate = self.failures_seen / (self.samples + self.active)
        return rate >= self.rules.brownout_ratio

    def suspect_brownout(self) -> bool:
        """The last few outcomes fail as often as a brownout's: wait and see."""
        known = len(self._recent)
        if known < max(1, (self._recent.maxlen or 0) // 2):
            return False
        return sum(self._recent) / known >= self.rules.brownout_ratio

    def busy_enough(self) -> bool:
        """Enough calls in flight for new outcomes to arrive while a retry waits.

        With only a few calls the quick signal could not change while they
        wait, and a retry held on it would wait for nothing.
        """
        return self.active >= 2 * max(1, self.rules.min_in_flight)

    def call_started(self) -> None:
        self.active += 1
        self.calls += 1
        self.balance = min(self.rules.burst, self.balance + self.rules.ratio)

    def call_finished(self) -> None:
        self.active = max(0, self.active - 1)

    def record(self, *, ok: bool) -> None:
        """One attempt's outcome at the provider (pacing 429s are not recorded)."""
        self.samples += 1
        self.failures_seen += 0 if ok else 1
        self._recent.append(not ok)
        alpha = max(1.0 / self.rules.window, 1.0 / self.samples)
        self.failure_rate += alpha * ((0.0 if ok else 1.0) - self.failure_rate)

    def ask_retry(self) -> RetryVerdict:
        """Take a retry from the budget, or say which limit refused it."""
        cap = self.in_flight_cap()
        if self.retrying >= cap:
            self.denied += 1
            return "busy" if cap > 0 else "refused"
        brownout = self.in_brownout()
        if brownout and self.balance < 1.0:
            self.denied += 1
            return "refused"
        if not brownout and self.busy_enough() and self.suspect_brownout():
            # a short run of failures: a steady error rate has them too, so
            # the retry waits and asks again rather than giving up
            self.denied += 1
            return "busy"
        self.retrying += 1
        self.retries += 1
        if brownout:
            self.balance -= 1.0
        return "granted"

    def try_retry(self) -> bool:
        """:meth:`ask_retry` as a yes/no."""
        return self.ask_retry() == "granted"

    def retry_finished(self) -> None:
        self.retrying = max(0, self.retrying - 1)
