"""The simulator's own record of each request it served.

The simulator is the ground truth for the client's metrics: a test (or a
benchmark) compares what a client measured — attempts, wall time, TTFT,
decode rate — with what the server saw, request by request, the way the
figures were checked against an independent server's logs.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Served"]


@dataclass(slots=True)
class Served:
    """One request as the simulator saw it; times are simulator seconds.

    ``status`` is the HTTP status answered (200 once the response began),
    ``"aborted"`` when the simulator cut the response (reset, stream cut)
    or ``"cancelled"`` when the client went away. ``first_token_at`` is
    when the first token was sent; ``decode_tps`` is the rate of the
    tokens after it, as served.
    """

    seq: int
    arrived_at: float
    stream: bool
    status: int | str = "pending"
    fault: str | None = None
    first_token_at: float | None = None
    ended_at: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def ttft_s(self) -> float | None:
        return None if self.first_token_at is None else self.first_token_at - self.arrived_at

    @property
    def wall_s(self) -> float | None:
        return None if self.ended_at is None else self.ended_at - self.arrived_at

    @property
    def decode_tps(self) -> float | None:
        if self.first_token_at is None or self.ended_at is None or self.output_tokens < 2:
            return None
        span = self.ended_at - self.first_token_at
        return (self.output_tokens - 1) / span if span > 0 else None
