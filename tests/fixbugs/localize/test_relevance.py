import json

from agentrt import FakeClock, RetryingModel
from agentrt.flow import ConcurrencyLimitedModel
from agentrt.llm import FakeModel, provider_error
from agentrt.sim import ResponderInput
from agentrt.tokens import LatencyModel
from fixbugs.localize import FileEvidence, model_relevance, rank_files

FILES = {
    "a.py": "def a():\n    return 1\n" * 5,
    "b.py": "def b():\n    return 2\n" * 5,
    "c.py": "def c():\n    return 3\n" * 5,
}


def says_relevant(*paths: str, invent: str | None = None):
    def respond(inp: ResponderInput) -> str:
        prompt = inp.messages[-1][1]
        files = [
            {"path": p, "relevant": True, "reason": f"{p} handles it"}
            for p in paths
            if f"### {p}" in prompt
        ]
        if invent:
            files.append({"path": invent, "relevant": True, "reason": "made up"})
        return json.dumps({"files": files})

    return respond


async def test_one_call_per_chunk_answers_merge_and_invented_paths_are_ignored():
    model = FakeModel(responder=says_relevant("b.py", invent="zzz.py"))
    res = await model_relevance(model, "bug", ["a.py", "b.py", "c.py"], FILES, budget_tokens=70)
    assert res.calls == len(model.requests) == 2  # a.py + b.py fit one chunk, c.py the next
    assert '"zzz.py"' not in str(res.evidence)
    # c.py's chunk holds one file, so its one (invented) answer is taken as about c.py
    assert [e.path for e in res.evidence] == ["b.py", "c.py"]
    assert all(r.json_schema is not None for r in model.requests)


async def test_a_single_file_chunk_takes_the_answer_whatever_path_the_model_wrote():
    def respond(inp: ResponderInput) -> str:
        return json.dumps({"files": [{"path": "file1.txt", "relevant": True, "reason": "r"}]})

    res = await model_relevance(
        FakeModel(responder=respond), "bug", ["a.py"], FILES, budget_tokens=40
    )
    assert [e.path for e in res.evidence] == ["a.py"]


async def test_a_failed_call_costs_only_its_chunk():
    model = FakeModel(responder=says_relevant("a.py", "b.py"), failures=[provider_error(500)])
    res = await model_relevance(
        model, "bug", ["a.py", "b.py"], FILES, budget_tokens=40, concurrency=1
    )
    assert res.failures == 1 and len(res.evidence) == 1 and "failed" in res.notes[0]


async def test_deadline_keeps_the_answers_that_arrived_in_time():
    clock = FakeClock()
    # each call takes 10 s of the fake clock; one at a time (the flow layer holds
    # the endpoint's limit), so only the first fits in 15 s
    model = RetryingModel(
        ConcurrencyLimitedModel(
            FakeModel(
                responder=says_relevant("a.py", "b.py", "c.py"),
                latency=LatencyModel(10.0, 0.0, 1e9),
                clock=clock,
                max_concurrency=1,
            )
        )
    )
    async with clock.autojumping():
        res = await model_relevance(
            model,
            "bug",
            ["a.py", "b.py", "c.py"],
            FILES,
            budget_tokens=40,
            deadline_s=15,
            clock=clock,
        )
    assert [e.path for e in res.evidence] == ["a.py"]
    assert "deadline" in res.notes[0] and "1 of 3" in res.notes[0]


async def test_model_opinion_cannot_lift_a_file_without_static_evidence():
    model = FakeModel(responder=says_relevant("a.py", "b.py", "c.py"))
    rel = await model_relevance(model, "bug", ["a.py", "b.py", "c.py"], FILES, budget_tokens=40)
    static = [
        FileEvidence("a.py", "naming", 1.0, "named like the test"),
        FileEvidence("b.py", "bm25", 0.1, "x"),
    ]
    ranked = rank_files([*static, *rel.evidence])
    assert [r.path for r in ranked] == ["a.py", "b.py"]


def test_scatter_prompts_share_a_byte_identical_prefix():
    from agentrt.chunking import chunk_code
    from fixbugs.localize.relevance import chunk_question, layout_for

    layout = layout_for("crash in parser: KeyError 'x'")
    a, b = chunk_code([("a.py", "x = 1\n" * 50), ("b.py", "y = 2\n" * 50)], 120)[:2]
    ra, rb = layout.request(chunk_question(a)), layout.request(chunk_question(b))
    assert ra.messages[0] == rb.messages[0]  # the system prompt
    ua, ub = ra.messages[-1].content, rb.messages[-1].content
    shared = layout.shared_text
    assert ua.startswith(shared) and ub.startswith(shared) and "crash in parser" in shared
    assert ua != ub and "a.py" in ua[len(shared) :] and "b.py" in ub[len(shared) :]
