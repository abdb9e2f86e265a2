"""`fixbugs bench tokenmath`'s replay: four walls run on a fake clock, in the token math's order.

A small recorded run (two relevance chunks at once, then a judgment, then a
rewrite) is replayed on the 7B profile: the figures come from the simulator
on a fake clock, so they are exact and the test never reads wall-clock time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrt import FakeClock
from agentrt.llm import ChatRequest, FakeModel
from agentrt.sim import get_profile
from fixbugs.eval.run import read_tree
from fixbugs.eval.tokenmath import (
    CaseRecording,
    RecordedCall,
    RecordingModel,
    bench_tokenmath,
    one_call_request,
    predict,
    replay,
    whole_bug_request,
    whole_bug_text,
)

BUG = "the report " + "class Rule:\n    def match(self, command): return 'x' in command\n" * 400


def _call(stage: str, prompt: str, answer: str, start: float, end: float) -> RecordedCall:
    req = ChatRequest.of(prompt, system=f"You do the {stage} step.", max_tokens=512, stage=stage)
    words = len(answer.split())
    return RecordedCall(req, answer, stage, start, end, True, len(prompt.split()) + 10, words)


def _run() -> list[RecordedCall]:
    chunk = "def f(x): return x + 1 " * 120
    return [
        _call("file_relevance", "chunk one " + chunk, "yes " * 20, 1.0, 1.2),
        _call("file_relevance", "chunk two " + chunk, "no " * 25, 1.0, 1.3),
        _call("root_cause", "regions R1 R2 " + chunk, "R1 the line " * 10, 5.0, 5.1),
        _call("root_cause", "regions R1 R2 " + chunk, "R1 the line " * 10, 5.0, 5.1),  # quorum
        _call("fix", "rewrite R1 " + chunk, "new code " * 80, 6.0, 6.5),
    ]


async def test_the_three_walls_are_run_and_ordered_as_the_token_math_predicts():
    profile = get_profile("7b")
    calls = _run()
    r = await replay(calls, profile, bug_text=BUG, run_wall_s=30.0)
    agent_s, conc, seq, one, whole = r.agent_s, r.concurrent, r.sequential, r.one_call, r.whole_bug
    # all four were run (each stage's calls seen by the simulator), not computed
    assert {s.stage for s in conc.stages} == {"file_relevance", "root_cause", "fix"}
    assert {s.stage for s in seq.stages} == {"file_relevance", "root_cause", "fix"}
    assert [s.stage for s in one.stages] == ["one_call"] and one.stages[0].calls == 1
    assert [s.stage for s in whole.stages] == ["whole_bug"] and whole.stages[0].calls == 1
    assert sum(s.calls for s in conc.stages) == len(calls)
    # the order the token math predicts: concurrent < one call < sequential
    assert conc.predicted_s < one.predicted_s < seq.predicted_s
    assert conc.wall_s < one.wall_s < seq.wall_s
    # the whole bug reads more and answers the same: only its prefill is longer
    w, o = whole.stages[0], one.stages[0]
    assert w.input_tokens > o.input_tokens and w.output_tokens == o.output_tokens
    assert w.ttft_s is not None and o.ttft_s is not None and w.ttft_s > o.ttft_s
    assert whole.wall_s - one.wall_s == pytest.approx(w.ttft_s - o.ttft_s, abs=0.05)
    assert whole.predicted_s == pytest.approx(whole.wall_s, rel=0.05)
    # decode at the profile's ~40 tok/s per stream
    rates = [s.decode_tps for s in conc.stages if s.decode_tps is not None]
    assert rates and all(35 <= r <= 45 for r in rates)
    # the whole run keeps the agent's own work: never shorter than the recorded 30 s run,
    # longer by no more than its calls' replayed time
    assert agent_s is not None and 30.0 <= agent_s <= 30.0 + conc.wall_s


async def test_the_one_call_reads_each_prompt_once_and_answers_all():
    calls = _run()
    req, answer = one_call_request(calls)
    text = req.messages[-1].content
    assert text.count("regions R1 R2") == 1  # the quorum's prompt, once
    assert "chunk one" in text and "chunk two" in text and "rewrite R1" in text
    assert answer.count("R1 the line") == 10 and answer.count("new code") == 80
    conc, seq, one, whole = predict(get_profile("7b"), calls, (3000, 200), (30000, 200))
    assert conc < seq and 0 < one < whole
    wreq, wanswer = whole_bug_request(calls, BUG)
    assert wanswer == answer and wreq.messages[-1].content.startswith(text)
    assert wreq.messages[-1].content.endswith(BUG) and wreq.stage == "whole_bug"


def test_the_whole_bug_is_the_report_then_each_file_under_its_path(tmp_path: Path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("A = 1\n")
    (tmp_path / "b.py").write_text("B = 2\n")
    (tmp_path / "c.png").write_bytes(b"\x89PNG\x00")  # not text: the walk leaves it out
    text = whole_bug_text("REPORT", dict(sorted(read_tree(tmp_path).items())))
    assert text == "REPORT\n\n# file: b.py\nB = 2\n\n\n# file: pkg/a.py\nA = 1\n"


async def test_bench_writes_the_three_figures():
    rec = CaseRecording("case-1", 30.0, tuple(_run()), True, BUG)
    empty = CaseRecording("case-2", 10.0, (), False)
    result = await bench_tokenmath([rec, empty], get_profile("7b"))
    out = result.as_json()
    for key in ("concurrent_s", "sequential_s", "one_call_s", "whole_bug_s"):
        assert isinstance(out[key], float) and out[key] > 0
    over_one, over_whole = out["concurrent_over_one_call"], out["concurrent_over_whole_bug"]
    assert isinstance(over_one, float) and isinstance(over_whole, float)
    assert 0 < over_whole < over_one
    assert out["skipped_no_calls"] == ["case-2"]
    assert "concurrent" in result.render()


async def test_recording_model_notes_each_call_as_sent():
    clock = FakeClock()
    calls: list[RecordedCall] = []
    model = RecordingModel(FakeModel(clock=clock), calls, clock.now)
    req = ChatRequest.of("hello there", max_tokens=8, stage="fix")
    async with clock.autojumping():
        await model.complete(req)
        async for _ in model.stream(req):
            pass
    assert [(c.request, c.stage, c.streamed) for c in calls] == [
        (req, "fix", False),
        (req, "fix", True),
    ]
    assert all(c.output_tokens > 0 and c.ended_at >= c.started_at for c in calls)
