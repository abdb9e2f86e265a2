"""Naturalness: a fake llama.cpp model that prefers one token decides the ranking factor."""

from __future__ import annotations

import ctypes

from fixbugs.repair.generate import Region, generate_candidates
from fixbugs.repair.hints import FailureHints
from fixbugs.repair.naturalness import mean_logprob, naturalness_factors

VOCAB = 4


class FakeLlama:
    """Tokens are characters mod 4; after any token, token 0 is far likelier than the rest."""

    def __init__(self) -> None:
        self.n_tokens = 0
        self._buf = (ctypes.c_float * VOCAB)(5.0, 0.0, 0.0, 0.0)

        class Ctx:
            def get_logits(_self):
                return self._buf

        self._ctx = Ctx()

    def tokenize(self, data: bytes, add_bos: bool = True) -> list[int]:
        return [b % VOCAB for b in data]

    def n_vocab(self) -> int:
        return VOCAB

    def reset(self) -> None:
        self.n_tokens = 0

    def eval(self, toks: list[int]) -> None:
        self.n_tokens += len(toks)


def test_mean_logprob_prefers_likely_tokens():
    llama = FakeLlama()
    likely = mean_logprob(llama, "x", "\x00\x04\x08")  # all token 0
    unlikely = mean_logprob(llama, "x", "\x01\x05\x09")  # all token 1
    assert likely > unlikely


async def test_factors_rank_the_more_natural_patch_higher():
    class Client:
        async def exclusive(self, fn):
            return fn(FakeLlama())

    old = "def f(a, b):\n    return a < b\n"
    cands = generate_candidates([Region("m.py", 2, 2, 1.0)], {"m.py": old}, FailureHints())
    factors = await naturalness_factors(Client(), cands, {"m.py": old}, top=len(cands))
    assert factors and all(0.5 <= f <= 1.5 for f in factors.values())
    assert len(set(factors.values())) > 1
    assert await naturalness_factors(object(), cands, {"m.py": old}) == {}
