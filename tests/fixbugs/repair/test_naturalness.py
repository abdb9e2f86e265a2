"""Naturalness scores candidates with the model's TokenScorer, found under its wrappers."""

from __future__ import annotations

from agentrt import FakeClock, RetryingModel
from agentrt.llm import FakeModel
from fixbugs.repair.naturalness import naturalness_factors
from fixbugs.repair.ranking import RepairCandidate

OLD = "def f(a, b):\n    x = 1\n    return a - b\n"


class ScoringFake(FakeModel):
    """A fake with logits: ``+`` is likelier than ``-``, and ``*`` less likely."""

    def __init__(self) -> None:
        super().__init__(clock=FakeClock())
        self.scored: list[tuple[str, str]] = []

    async def score(self, prefix: str, continuation: str) -> float:
        self.scored.append((prefix, continuation))
        return -0.5 if "+" in continuation else -4.5 if "*" in continuation else -2.5


def _cand(cid: int, new_line: str) -> RepairCandidate:
    return RepairCandidate(
        id=cid,
        path="m.py",
        diff="",
        new_text=OLD.replace("    return a - b\n", new_line),
        template="t",
        why="",
        start=3,
        end=3,
        suspiciousness=1.0,
        prior=1.0,
        naturalness=1.0,
        size=2,
        overfit_risk="low",
    )


async def test_factors_come_from_the_scorer_under_the_flow_layer() -> None:
    backend = ScoringFake()
    cands = [_cand(1, "    return a + b\n"), _cand(2, "    return a * b\n")]
    factors = await naturalness_factors(RetryingModel(backend), cands, {"m.py": OLD})
    assert factors == {1: 1.5, 2: 0.5}  # exp(±1), clamped to [0.5, 1.5]
    # the original lines are scored once for both candidates, after the same context
    assert [c for _p, c in backend.scored].count("    return a - b\n") == 1
    assert all(p == "def f(a, b):\n    x = 1\n" for p, _c in backend.scored)


async def test_a_model_without_a_scorer_gives_no_factors() -> None:
    cands = [_cand(1, "    return a + b\n")]
    assert await naturalness_factors(RetryingModel(FakeModel()), cands, {"m.py": OLD}) == {}
