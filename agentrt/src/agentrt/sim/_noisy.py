"""A responder that is right most of the time: a seeded share wrong, a share malformed.

An agent's plumbing is proven against a model that answers well, and its
robustness against one that sometimes does not. :class:`NoisyResponder`
answers from a ``right`` answer function; per call, one draw of a seeded
generator makes the answer a ``wrong`` one (with probability
``AnswerNoise.wrong``) or the right one cut short (``malformed``: for a JSON
request, JSON that does not parse; :func:`~agentrt.llm._responder.cut_short`,
as the simulator's ``malformed_json`` fault cuts it). The draws follow the
call order, so a retried request may be answered well: noise per call, as a
real model's is. Latency (a long time to first token) is the profile's, not
the responder's.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from agentrt.llm._responder import Responder, ResponderInput, cut_short

__all__ = ["AnswerNoise", "Draw", "NoisyResponder"]

Draw = Literal["right", "wrong", "malformed"]


@dataclass(frozen=True, slots=True)
class AnswerNoise:
    """Per-call probabilities of a wrong and of a malformed answer (they sum to at most 1)."""

    wrong: float = 0.0
    malformed: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        if min(self.wrong, self.malformed) < 0 or self.wrong + self.malformed > 1:
            raise ValueError(f"noise rates must be >= 0 and sum to <= 1 ({self})")


class NoisyResponder:
    """``right``'s answers, with ``noise``'s share replaced by ``wrong``'s or cut short.

    ``drawn`` counts what each call got, so a run can say how noisy it was.
    """

    def __init__(self, right: Responder, wrong: Responder, noise: AnswerNoise) -> None:
        self.right = right
        self.wrong = wrong
        self.noise = noise
        self._rng = random.Random(noise.seed)
        self.drawn: Counter[Draw] = Counter()

    def draw(self) -> Draw:
        u = self._rng.random()
        if u < self.noise.wrong:
            return "wrong"
        if u < self.noise.wrong + self.noise.malformed:
            return "malformed"
        return "right"

    def __call__(self, req: ResponderInput) -> str:
        kind = self.draw()
        self.drawn[kind] += 1
        if kind == "wrong":
            return self.wrong(req)
        text = self.right(req)
        return cut_short(text) if kind == "malformed" else text
