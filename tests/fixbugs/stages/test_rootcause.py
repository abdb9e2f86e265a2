"""The root cause: a region chosen from the evidence, checked, and streamed to the person.

Each test builds a small repository and report, ranks it with the static
signals, and runs the root-cause stage with a fake model (or the in-process
OpenAI-compatible simulator) on a FakeClock: no sleeps, no network.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentrt import FakeClock, ProviderError, Trust
from agentrt.llm import FakeModel
from agentrt.metrics import MetricsRecorder
from agentrt.sim import ResponderInput, in_process_model
from agentrt.tokens import LatencyModel
from fixbugs.inputs import load_inputs
from fixbugs.localize.locate import static_evidence
from fixbugs.localize.rank import rank_files
from fixbugs.localize.regions import MAX_REGION_LINES, Region, suspicious_regions
from fixbugs.localize.traceback import parse_failure
from fixbugs.run.context import AgentOptions, Models, RunContext
from fixbugs.run.model_steps import ALL_STEPS
from fixbugs.run.progress import (
    Journal,
    JudgmentData,
    JudgmentPrinter,
    ProgressEvent,
    collecting_sink,
)
from fixbugs.run.record import Analysis, BugRun, RootCause
from fixbugs.run.report import _stage_figures
from fixbugs.stages.rootcause import (
    JUDGE_SYSTEM,
    JUDGE_SYSTEM_HIGH,
    QUORUM,
    SECOND_TEMPERATURE,
    check_judgment,
    root_cause,
    run_regions,
)

INVOICE = (
    "from decimal import Decimal\n"
    "\n"
    "\n"
    "def subtotal(lines):\n"
    "    return sum(q * p for q, p in lines)\n"
    "\n"
    "\n"
    "def apply_discount(total, percent):\n"
    "    if percent > 100:\n"
    "        raise ValueError('discount above 100%')\n"
    "    return total - total * percent / 10\n"
    "\n"
    "\n"
    "def total(lines, percent):\n"
    "    return apply_discount(subtotal(lines), percent)\n"
)
HELPERS = "def fmt(x):\n    return f'{x:.2f}'\n"
REPORT = """# Discount is ten times too large

`total([(1, 100)], 10)` gives 0 instead of 90.

```
Traceback (most recent call last):
  File "/home/me/venv/lib/python3.11/site-packages/shop/invoice.py", line 15, in total
    return apply_discount(subtotal(lines), percent)
  File "/home/me/venv/lib/python3.11/site-packages/shop/invoice.py", line 11, in apply_discount
    return total - total * percent / 10
AssertionError: assert 0 == 90
```
"""


class _Case:
    """A bug ranked on its static signals, and the services the root-cause stage uses."""

    def __init__(self, tmp_path: Path, models: Models | None, clock: FakeClock) -> None:
        repo = tmp_path / "repo"
        (repo / "shop").mkdir(parents=True)
        (repo / "shop" / "__init__.py").write_text("")
        (repo / "shop" / "invoice.py").write_text(INVOICE)
        (repo / "shop" / "helpers.py").write_text(HELPERS)
        (tmp_path / "bug.md").write_text(REPORT)
        sink, _ = collecting_sink()
        self.inputs = load_inputs(tmp_path / "bug.md", repo)
        self.ctx = RunContext.create(
            self.inputs.repo,
            models=models,
            options=AgentOptions(use_model=models is not None, model_steps=ALL_STEPS),
            journal=Journal(clock, sink),
        )
        files = self.ctx.files()
        text = self.inputs.report.text
        failure = parse_failure(text, files.keys())
        self.ranked = rank_files(static_evidence(files, text, failure, []))
        self.run = BugRun(started=0.0, analysis=Analysis(failure=failure))

    @property
    def recorder(self) -> MetricsRecorder:
        return self.ctx.recorder

    @property
    def notes(self) -> list[str]:
        return self.ctx.journal.notes

    @property
    def events(self) -> list[ProgressEvent]:
        return self.ctx.journal.events

    def regions(self) -> list[Region]:
        return run_regions(self.inputs, self.run, self.ranked, self.ctx.files())

    async def judge(self) -> RootCause | None:
        return await root_cause(self.inputs, self.run, self.ctx, self.regions())


def _ctx(tmp_path: Path, models: Models | None, clock: FakeClock) -> _Case:
    return _Case(tmp_path, models, clock)


def _model(clock: FakeClock, answer: str, *, trust: Trust = "low", **kw: object) -> Models:
    def respond(_: ResponderInput) -> str:
        return answer

    m = FakeModel(responder=respond, clock=clock, latency=LatencyModel(1.0, 0.0, 10.0), **kw)  # type: ignore[arg-type]
    return Models(map=m, judge=m, judge_trust=trust)


async def test_without_a_model_the_best_evidence_region_stands(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, None, FakeClock())
    rc = await ctx.judge()
    assert rc is not None
    assert (rc.path, rc.function, rc.start, rc.end) == ("shop/invoice.py", "apply_discount", 8, 11)
    assert rc.origin == "static"
    assert "deepest project frame shop/invoice.py:11" in rc.explanation
    assert "AssertionError" in rc.explanation and "got 0 where 90 was expected" in rc.explanation
    assert ctx.regions()[0].to_dict()["function"] == "apply_discount"
    assert all(r.reasons for r in ctx.regions())


async def test_a_grounded_answer_is_kept_and_streamed_before_it_is_final(tmp_path: Path) -> None:
    clock = FakeClock()
    answer = "R1\nThe discount divides percent by 10 instead of 100, so total drops to zero."
    ctx = _ctx(tmp_path, _model(clock, answer), clock)
    async with clock.autojumping():
        with ctx.recorder.activate():
            rc = await ctx.judge()
    assert rc is not None and rc.origin == "model"
    assert rc.explanation.startswith("The discount divides percent by 10")
    assert (rc.path, rc.function) == ("shop/invoice.py", "apply_discount")
    pieces = [(e, e.data) for e in ctx.events if isinstance(e.data, JudgmentData)]
    assert len(pieces) == sum(e.kind == "judgment" for e in ctx.events)
    deltas = [e for e, piece in pieces if not piece.done]
    assert len(deltas) > 5 and "".join(piece.delta for _, piece in pieces) == answer
    assert pieces[-1][1] == JudgmentData(done=True)
    # pieces arrive over the decode, not all at the end: the first at TTFT
    assert deltas[0].at_s == 1.0 and deltas[-1].at_s > deltas[0].at_s + 1.0
    (call,) = ctx.recorder.records
    assert call.stage == "root_cause" and call.streamed and call.ttft_s == 1.0


async def test_an_answer_naming_a_listed_region_by_path_and_function_is_kept(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    answer = (
        "shop/invoice.py, function apply_discount\n"
        "It divides percent by 10 where 100 is meant, so total is ten times too small."
    )
    ctx = _ctx(tmp_path, _model(clock, answer), clock)
    async with clock.autojumping():
        rc = await ctx.judge()
    assert rc is not None and rc.origin == "model" and rc.function == "apply_discount"
    assert rc.explanation.startswith("It divides percent by 10")


async def test_an_answer_naming_no_evidence_region_is_discarded_with_a_note(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    ctx = _ctx(tmp_path, _model(clock, "R9\nThe helpers file formats numbers wrongly."), clock)
    async with clock.autojumping():
        rc = await ctx.judge()
    assert rc is not None and rc.origin == "static" and rc.function == "apply_discount"
    assert any("named no listed evidence region" in n and "discarded" in n for n in ctx.notes)


async def test_an_explanation_that_does_not_describe_the_code_is_discarded(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    ctx = _ctx(tmp_path, _model(clock, "R1\nThe file "), clock)
    async with clock.autojumping():
        rc = await ctx.judge()
    assert rc is not None and rc.origin == "static"
    assert "deepest project frame" in rc.explanation  # the evidence's explanation stands
    assert any("does not describe the code of R1" in n for n in ctx.notes)


async def test_a_failed_judgment_call_leaves_the_evidence_root_cause(tmp_path: Path) -> None:
    clock = FakeClock()
    models = _model(clock, "R1 whatever", failures=[ProviderError("endpoint down", status=503)])
    ctx = _ctx(tmp_path, models, clock)
    async with clock.autojumping():
        rc = await ctx.judge()
    assert rc is not None and rc.origin == "static"
    assert any("judgment call failed" in n for n in ctx.notes)


async def test_root_cause_ttft_is_measured_on_an_openai_compatible_endpoint(
    tmp_path: Path,
) -> None:
    clock = FakeClock()

    def respond(_: ResponderInput) -> str:
        return "R1\nThe discount in apply_discount divides percent by 10, not 100."

    async with (
        clock.autojumping(),
        in_process_model("default", clock=clock, responder=respond) as m,
    ):
        ctx = _ctx(tmp_path, Models(map=m, judge=m), clock)
        with ctx.recorder.activate():
            rc = await ctx.judge()
    assert rc is not None and rc.origin == "model"
    figures = _stage_figures("root_cause", 1.0, ctx.recorder.records)
    assert figures.model_calls == 1 and figures.ttft_s is not None
    assert figures.ttft_s > 0
    assert any(e.kind == "judgment" for e in ctx.events)


def test_the_terminal_printer_writes_one_line_for_a_streamed_judgment() -> None:
    printer = JudgmentPrinter(lead="judgment: ")

    def ev(data: JudgmentData) -> ProgressEvent:
        return ProgressEvent("judgment", "root_cause", 0.0, "", data)

    out = [
        printer.feed(ev(JudgmentData(delta=" R1\n"))),
        printer.feed(ev(JudgmentData(delta="The loop"))),
        printer.feed(ev(JudgmentData(delta=" is off."))),
        printer.feed(ev(JudgmentData(done=True))),
        printer.feed(ProgressEvent("note", "root_cause", 0.0, "")),
    ]
    assert out == ["judgment: R1\n", "The loop", " is off.", "\n", None]
    assert printer.close() is None


def test_long_functions_are_narrowed_around_their_evidence() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(40))
    files = {"pkg/big.py": "def big():\n" + body + "    return boom()\n"}
    report = (
        'Traceback (most recent call last):\n  File "pkg/big.py", line 42, in big\n'
        "    return boom()\nNameError: name 'boom' is not defined\n"
    )
    failure = parse_failure(report, files.keys())
    ranked = rank_files(static_evidence(files, report, failure, []))
    (region,) = suspicious_regions(files, ranked, report=report)
    # MAX_REGION_LINES up to the frame's line 42, kept inside the function (1-42)
    assert region.function == "big" and (region.start, region.end) == (43 - MAX_REGION_LINES, 42)


def test_the_window_holds_the_frame_and_slides_to_the_reports_identifiers() -> None:
    body = [f"    x{i} = {i}\n" for i in range(60)]
    body[20] = "    return boom()\n"
    body[36] = "    rate_limit = parse_rate_limit(x3)\n"
    files = {"pkg/big.py": "def big():\n" + "".join(body)}
    report = (
        'Traceback (most recent call last):\n  File "pkg/big.py", line 22, in big\n'
        "    return boom()\nNameError: name 'boom' is not defined\n"
        "It happens whenever `rate_limit` is set.\n"
    )
    failure = parse_failure(report, files.keys())
    ranked = rank_files(static_evidence(files, report, failure, []))
    (region,) = suspicious_regions(files, ranked, report=report)
    # the frame's line and the line using rate_limit (38) in one window
    assert region.start <= 22 and region.end >= 38
    assert region.end - region.start + 1 == MAX_REGION_LINES


async def test_an_answer_choosing_a_weaker_region_leaves_the_strongest_evidence(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    plain = _ctx(tmp_path / "plain", None, clock)
    weaker = [i for i, r in enumerate(ctx_regions(plain), 1) if r.path == "shop/helpers.py"]
    assert weaker, "the fixture must offer a weaker region"
    answer = f"R{weaker[0]}\nfmt formats x with two decimals, which rounds the total wrongly."
    ctx = _ctx(tmp_path / "judged", _model(clock, answer), clock)
    async with clock.autojumping():
        rc = await ctx.judge()
    assert rc is not None and rc.origin == "static"
    assert (rc.path, rc.function) == ("shop/invoice.py", "apply_discount")
    assert any("over stronger evidence" in n for n in ctx.notes)


def ctx_regions(ctx: _Case) -> list[Region]:
    return ctx.regions()


# -- trust: how far the judge's choice counts ------------------------------------------
# The fixture lists apply_discount (R1, the deepest frame), total (R2, weaker by more than
# 5%) and two files' first lines; subtotal (lines 4-5) is not listed.
SUBTOTAL_LINE = "return sum(q * p for q, p in lines)"


async def _judged(tmp_path: Path, answer: str, trust: Trust) -> tuple[RootCause | None, _Case]:
    clock = FakeClock()
    ctx = _ctx(tmp_path / trust, _model(clock, answer, trust=trust), clock)
    async with clock.autojumping():
        rc = await ctx.judge()
    return rc, ctx


def test_the_fixture_lists_a_weaker_region_and_leaves_subtotal_out(tmp_path: Path) -> None:
    regions = _ctx(tmp_path, None, FakeClock()).regions()
    assert [r.function for r in regions[:2]] == ["apply_discount", "total"]
    assert regions[1].score < regions[0].score * 0.95
    assert "subtotal" not in {r.function for r in regions}


async def test_a_listed_weaker_region_stands_on_high_trust_and_is_refused_on_low(
    tmp_path: Path,
) -> None:
    answer = "R2\ntotal passes subtotal(lines) and percent on; the percent it passes is wrong."
    high, high_ctx = await _judged(tmp_path, answer, "high")
    assert high is not None and high.origin == "model" and high.function == "total"
    assert high.explanation.startswith("total passes subtotal(lines)")
    assert high.evidence and "caller frame" in high.evidence[0]  # the region's own evidence
    assert any("(trust high) chose shop/invoice.py:14-15" in n for n in high_ctx.notes)
    low, low_ctx = await _judged(tmp_path, answer, "low")
    assert low is not None and low.origin == "static" and low.function == "apply_discount"
    assert any("over stronger evidence" in n and "discarded" in n for n in low_ctx.notes)


@pytest.mark.parametrize(
    "answer",
    [
        "shop/invoice.py, function subtotal\n> " + SUBTOTAL_LINE + "\n"
        "subtotal sums q * p over lines but the quantities q are strings here.",
        # numbered as the prompt's excerpts are, in a fence
        "shop/invoice.py, function subtotal\n```python\n    5 |     " + SUBTOTAL_LINE + "\n```\n"
        "subtotal sums q * p over lines but the quantities q are strings here.",
        # no quote block: an inline span that is a whole line of the file
        "shop/invoice.py, line 5 (not a listed region)\n"
        f"The root cause is the line `{SUBTOTAL_LINE}` in shop/invoice.py: subtotal is wrong.",
    ],
    ids=["quote", "fenced-numbered", "inline"],
)
async def test_an_unlisted_region_grounded_by_its_quote_stands_on_high_trust(
    tmp_path: Path, answer: str
) -> None:
    rc, ctx = await _judged(tmp_path, answer, "high")
    assert rc is not None and rc.origin == "model"
    assert (rc.path, rc.function, rc.start, rc.end) == ("shop/invoice.py", "subtotal", 4, 5)
    assert "not listed" in rc.evidence[0] and "line(s) 5" in rc.evidence[0]
    assert "subtotal" in rc.explanation and ">" not in rc.explanation
    assert any("not listed) over stronger evidence" in n and "kept" in n for n in ctx.notes)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (
            "shop/invoice.py, function subtotal\n> return sum(q + p for q, p in lines)\n"
            "subtotal adds q and p where it should multiply them.",
            "quoted a line that is not in function subtotal of shop/invoice.py",
        ),
        (
            "shop/invoice.py, function grand_total\n> " + SUBTOTAL_LINE + "\n"
            "grand_total sums the lines wrongly in this code.",
            "named function grand_total, which shop/invoice.py lacks",
        ),
        (
            "shop/ledger.py, function subtotal\n> " + SUBTOTAL_LINE + "\n"
            "subtotal sums the lines wrongly in this code.",
            "named no listed evidence region and no file of the repository",
        ),
        (
            "shop/invoice.py, function subtotal\nsubtotal sums q * p wrongly for these lines.",
            "named function subtotal of shop/invoice.py but quoted none of its code",
        ),
    ],
    ids=["quote-not-in-file", "no-such-function", "no-such-file", "no-quote"],
)
async def test_an_ungrounded_unlisted_region_is_discarded_with_a_note(
    tmp_path: Path, answer: str, why: str
) -> None:
    rc, ctx = await _judged(tmp_path, answer, "high")
    assert rc is not None and rc.origin == "static" and rc.function == "apply_discount"
    assert any(why in n and "discarded" in n for n in ctx.notes), ctx.notes


async def test_an_unlisted_region_is_not_looked_for_on_low_trust(tmp_path: Path) -> None:
    answer = (
        "shop/invoice.py, function subtotal\n> " + SUBTOTAL_LINE + "\n"
        "subtotal sums q * p over lines but the quantities q are strings here."
    )
    rc, ctx = await _judged(tmp_path, answer, "low")
    assert rc is not None and rc.origin == "static" and rc.function == "apply_discount"
    assert any("named no listed evidence region" in n for n in ctx.notes)


async def test_the_judge_is_told_what_its_trust_allows(tmp_path: Path) -> None:
    for trust, system in (("low", JUDGE_SYSTEM), ("high", JUDGE_SYSTEM_HIGH)):
        clock = FakeClock()
        models = _model(clock, "R1\nThe discount divides percent by 10, not 100.", trust=trust)
        ctx = _ctx(tmp_path / trust, models, clock)
        async with clock.autojumping():
            await ctx.judge()
        judge = models.judge
        assert isinstance(judge, FakeModel)
        # trust high asks a quorum at once: the greedy answer streamed, then samples
        assert len(judge.requests) == (QUORUM if trust == "high" else 1)
        for req in judge.requests:
            assert req.messages[0].content == system
            told = "starting with '> '" in req.messages[-1].content
            assert told == (trust == "high")
        assert [r.temperature for r in judge.requests[1:]] == [SECOND_TEMPERATURE] * (
            len(judge.requests) - 1
        )


def test_on_high_trust_a_quote_places_the_region_more_exactly_than_a_path() -> None:
    files = {"pkg/a.py": "X = 1\nY = 2\nZ = 3\n\n\ndef f(x):\n    return x + 1\n"}
    module = Region("pkg/a.py", None, 1, 3, 1.0, ("BM25 against the report",))
    answer = (
        "pkg/a.py, line 7 (not a listed region)\nThe line `return x + 1` in f adds one too many."
    )
    region, _, why = check_judgment(answer, [module], files, trust="high")
    assert why is None and region is not None and (region.function, region.start) == ("f", 6)
    # low trust: the path names the module-level region, as it always did
    region, _, _ = check_judgment(answer, [module], files, trust="low")
    assert region is None or region is module


def test_on_high_trust_a_quote_inside_a_listed_region_is_that_region(tmp_path: Path) -> None:
    case = _ctx(tmp_path, None, FakeClock())
    regions, files = case.regions(), case.ctx.files()
    answer = (
        "shop/invoice.py\n> return total - total * percent / 10\n"
        "The discount divides by ten where a hundred is meant."
    )
    region, _, why = check_judgment(answer, regions, files, trust="high")
    assert why is None and region is regions[0]  # with its own evidence


def test_a_grounded_quote_needs_no_word_of_the_code_in_the_explanation() -> None:
    files = {"pkg/pat.py": 'import re\n\nPAT = re.compile(r"[a-z]+\\d")\n'}
    answer = (
        "pkg/pat.py\n> " + 'PAT = re.compile(r"[a-z]+\\d")' + "\n"
        "This expression rejects uppercase letters, which the report shows are valid."
    )
    region, explanation, why = check_judgment(answer, [], files, trust="high")
    assert why is None and region is not None and region.start == 1
    assert explanation.startswith("This expression rejects")
    too_short = answer.rsplit("\n", 1)[0] + "\nIt is wrong."
    assert check_judgment(too_short, [], files, trust="high")[0] is None


# -- trust high: an overrule of the evidence takes every judgment asked ------------------


def _answers(clock: FakeClock, *answers: str) -> Models:
    """A high-trust judge whose calls get ``answers`` in turn (the streamed one first)."""
    calls = iter(answers)

    def respond(_: ResponderInput) -> str:
        return next(calls)

    m = FakeModel(responder=respond, clock=clock, latency=LatencyModel(1.0, 0.0, 10.0))
    return Models(map=m, judge=m, judge_trust="high")


async def _quorum(tmp_path: Path, *answers: str) -> tuple[RootCause | None, _Case]:
    clock = FakeClock()
    ctx = _ctx(tmp_path, _answers(clock, *answers), clock)
    async with clock.autojumping():
        rc = await ctx.judge()
    return rc, ctx


TOTAL_ANSWER = "R2\ntotal passes subtotal(lines) and percent on; the percent it passes is wrong."
DISCOUNT_ANSWER = "R1\napply_discount divides the percent by 10 where 100 is meant."


async def test_an_overrule_the_other_judgment_does_not_share_leaves_the_evidence(
    tmp_path: Path,
) -> None:
    rc, ctx = await _quorum(tmp_path, TOTAL_ANSWER, DISCOUNT_ANSWER)
    # the second judgment names the evidence's best region: it stands, with its words
    assert rc is not None and rc.origin == "model" and rc.function == "apply_discount"
    assert rc.explanation.startswith("apply_discount divides")
    assert any("did not agree" in n and "shop/invoice.py:14-15" in n for n in ctx.notes)


async def test_an_overrule_with_a_malformed_second_judgment_is_not_kept(tmp_path: Path) -> None:
    rc, ctx = await _quorum(tmp_path, TOTAL_ANSWER, '{"answer": "R')
    assert rc is not None and rc.origin == "static" and rc.function == "apply_discount"
    assert any("1 invalid" in n and "not kept" in n for n in ctx.notes), ctx.notes
    assert any("the evidence's explanation stands" in n for n in ctx.notes)


async def test_a_failed_second_call_does_not_make_a_quorum(tmp_path: Path) -> None:
    clock = FakeClock()
    m = FakeModel(
        responder=lambda _: TOTAL_ANSWER,
        clock=clock,
        latency=LatencyModel(1.0, 0.0, 10.0),
        failures=[None, ProviderError("overloaded", status=529)],
    )
    ctx = _ctx(tmp_path, Models(map=m, judge=m, judge_trust="high"), clock)
    async with clock.autojumping():
        rc = await ctx.judge()
    assert rc is not None and rc.origin == "static" and rc.function == "apply_discount"
    assert any("judgment call failed" in n for n in ctx.notes), ctx.notes
    assert any("not kept" in n for n in ctx.notes)


async def test_the_evidence_supported_first_judgment_needs_no_second_voice(
    tmp_path: Path,
) -> None:
    rc, ctx = await _quorum(tmp_path, DISCOUNT_ANSWER, TOTAL_ANSWER)
    assert rc is not None and rc.origin == "model" and rc.function == "apply_discount"
    assert not any("over stronger evidence" in n for n in ctx.notes)


async def test_only_the_first_judgment_streams_to_the_person(tmp_path: Path) -> None:
    _, ctx = await _quorum(tmp_path, DISCOUNT_ANSWER, TOTAL_ANSWER)
    shown = "".join(e.data.delta for e in ctx.events if isinstance(e.data, JudgmentData))
    assert shown == DISCOUNT_ANSWER
