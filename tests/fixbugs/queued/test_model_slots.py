"""Model stages take as many bugs at once as the model endpoint serves."""

from __future__ import annotations

from agentrt.flow import RetryingModel
from agentrt.llm import FakeModel
from agentrt.queues import EpochClock
from fixbugs.queued import StagedAgent, StagedConfig, model_slots_for
from fixbugs.run.context import AgentOptions, Models


async def _no_options() -> AgentOptions:
    raise AssertionError("no stage runs in these tests")


def _slots(models: Models | None, config: StagedConfig | None = None) -> dict[str, int]:
    agent = StagedAgent(
        models, _no_options, clock=EpochClock(), publish=lambda _j, _e: None, config=config
    )
    return {s.name: s.concurrency for s in agent.pipeline().stages}


def test_model_stages_follow_the_endpoints_limit() -> None:
    models = Models(map=FakeModel(max_concurrency=3), judge=FakeModel(max_concurrency=5))
    assert model_slots_for(models) == 5
    slots = _slots(models, StagedConfig(sandbox_slots=2))
    assert slots == {"analysis": 5, "reproduction": 2, "root_cause": 5, "repair": 2}


def test_the_limit_is_found_behind_the_retrying_layer() -> None:
    inner = FakeModel(max_concurrency=6)
    models = Models(map=RetryingModel(inner), judge=RetryingModel(inner))
    assert model_slots_for(models) == 6


def test_a_one_call_endpoint_still_overlaps_two_bugs() -> None:
    # the embedded model serves one call at a time; a second bug's local work overlaps it
    models = Models(map=FakeModel(max_concurrency=1), judge=FakeModel(max_concurrency=1))
    assert model_slots_for(models) == 2


def test_no_limit_and_no_model_fall_back_to_eight_and_a_setting_wins() -> None:
    assert model_slots_for(Models(map=FakeModel(), judge=FakeModel())) == 8
    assert model_slots_for(None) == 8
    models = Models(map=FakeModel(max_concurrency=3), judge=FakeModel(max_concurrency=3))
    assert _slots(models, StagedConfig(model_slots=12))["root_cause"] == 12
