"""``fixbugs bench steps``: pairs interleaved, medians compared, the patch checked."""

from __future__ import annotations

from fixbugs.bench.steps import StepsRun, bench_steps
from fixbugs.run.model_steps import ALL_STEPS, ModelSteps


async def test_rounds_interleave_all_steps_and_the_default_and_compare_medians() -> None:
    order: list[tuple[str, ModelSteps | None]] = []
    walls = iter([60.0, 12.0, 58.0, 13.0, 62.0, 11.0])

    async def one(label: str, steps: ModelSteps | None) -> StepsRun:
        order.append((label, steps))
        return StepsRun(label, "x", next(walls), {}, True, "--- a/p\n+++ b/p\n", "p", "p:1-2")

    out = await bench_steps(one, rounds=3)
    assert order == [("all_steps", ALL_STEPS), ("default", None)] * 3
    assert out["all_steps_median_s"] == 60.0
    assert out["default_median_s"] == 12.0
    assert out["speedup"] == 5.0
    assert out["same_validated_patch"] is True
    assert out["same_localization"] is True


async def test_a_different_or_missing_fix_is_not_the_same_patch() -> None:
    async def one(label: str, steps: ModelSteps | None) -> StepsRun:
        if label == "default":
            return StepsRun(label, "none", 10.0, {}, False, None, "q", "q:1-2")
        return StepsRun(label, "all", 20.0, {}, True, "patch", "p", "p:1-2")

    out = await bench_steps(one, rounds=2)
    assert out["same_validated_patch"] is False
    assert out["same_localization"] is False
    assert out["default_median_s"] == 10.0
