"""A responder that is right most of the time, and the simulator served from a thread."""

from __future__ import annotations

import httpx
import pytest

from agentrt.sim import (
    AnswerNoise,
    NoisyResponder,
    ResponderInput,
    create_app,
    get_profile,
    serving_in_thread,
)

REQ = ResponderInput((("user", "q"),), 10)


def test_seeded_noise_hits_its_rates_and_repeats():
    def run() -> list[str]:
        noisy = NoisyResponder(lambda r: '{"a": 1}', lambda r: "wrong", AnswerNoise(0.3, 0.1, 3))
        return [noisy(REQ) for _ in range(3000)]

    said = run()
    assert abs(said.count("wrong") / 3000 - 0.3) < 0.03
    malformed = [s for s in said if s not in ("wrong", '{"a": 1}')]
    assert abs(len(malformed) / 3000 - 0.1) < 0.02
    assert all(s.endswith(" ...") for s in malformed)  # cut short: JSON that does not parse
    assert run() == said


def test_rates_that_sum_past_one_are_refused():
    with pytest.raises(ValueError):
        AnswerNoise(0.7, 0.5)


def test_an_app_served_from_a_thread_answers_on_loopback_until_the_block_ends():
    app = create_app(get_profile("fast"))
    with serving_in_thread(app) as url:
        assert url.startswith("http://127.0.0.1:")
        models = httpx.get(f"{url}/models", timeout=10).json()
        assert models["data"][0]["id"] == "sim-model"
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{url}/models", timeout=2)
