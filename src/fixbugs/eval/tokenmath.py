"""``fixbugs bench tokenmath``: the agent's model calls at a 7B model's speed, three ways.

The seeds' token math says a model's wall is about TTFT + output tokens ×
time per token, so one call holding all the evidence waits for every output
token in one stream, while the same work as concurrent calls waits only for
the longest chain of them. This bench checks that claim on FixBugs itself,
by running, not by formula:

1. **Record.** The whole agent runs on each case of a case folder (real
   sandbox, real tests) against the oracle endpoint (:mod:`fixbugs.eval.oracle`,
   answers from the case's gold, fast), and every model call it makes is
   recorded as sent: its request, its answer and when it started and ended
   on the run's real clock.
2. **Replay, three ways**, against the provider simulator with a latency
   profile (``7b``: TTFT growing with input tokens, ~40 output tokens/s per
   stream, 8 requests served at once) on a :class:`~agentrt.FakeClock`, so
   the figures are the profile's, not this machine's load:

   * *concurrent*: each call starts when the calls it waited for in the
     recorded run have ended (a call "waited for" every call that had ended
     before it started: the agent's dependency graph as it scheduled it,
     read conservatively), the others at once;
   * *sequential*: the same calls one after another, in the order they started;
   * *one call*: one request whose input is all the evidence those calls
     read (each distinct prompt once: the judge's quorum asks one prompt
     twice) and whose output is their answers' total (each distinct one once).

   The three walls are the model calls alone. Beside them, ``agent_s`` is
   the whole run at the profile's speed: the calls replayed concurrently as
   above, the agent's own work (index, sandbox, tests) kept at the time it
   took for real, a call shifted by as much as the calls it waited for ended
   later than recorded (conservative: waiting that overlapped the agent's
   own work is counted as if it did not).

The token math's prediction (per call TTFT + output/decode rate; its
critical path, its sum, and one call on the summed tokens) is printed beside
the measured walls, never in place of them.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentrt import FakeClock
from agentrt.llm import ChatModel, ChatRequest, ChatResult, Completed, StreamEvent
from agentrt.metrics import CallRecord, MetricsRecorder, current_stage, summarize
from fixbugs.errors import InputError

if TYPE_CHECKING:  # the simulator (starlette) is imported when the bench runs, not with the CLI
    from agentrt.sim import ResponderInput, SimProfile

__all__ = [
    "BugFigures",
    "CaseRecording",
    "RecordedCall",
    "RecordingModel",
    "StageFigures",
    "TokenmathResult",
    "WayFigures",
    "bench_tokenmath",
    "one_call_request",
    "predict",
    "record_case",
    "replay",
    "tokenmath_command",
]

ONE_CALL_SYSTEM = (
    "You are debugging one bug. Below is all the evidence; answer every question it asks, in order."
)


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One model call as the agent made it: the request, the answer, when (run seconds)."""

    request: ChatRequest
    answer: str
    stage: str
    started_at: float
    ended_at: float
    streamed: bool
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class CaseRecording:
    """A whole run's model calls and its wall (real seconds), from the recording run."""

    case_id: str
    wall_s: float
    calls: tuple[RecordedCall, ...]
    validated: bool


class RecordingModel:
    """A :class:`~agentrt.llm.ChatModel` that passes calls through and records each one.

    Wrapped outermost around a role's client, it sees each call as the stage
    made it (retries inside count once) and notes the request itself, so the
    replay sends exactly what the agent sent.
    """

    def __init__(
        self, inner: ChatModel, calls: list[RecordedCall], now: Callable[[], float]
    ) -> None:
        self.inner = inner
        self.model = inner.model
        self.name = inner.name
        self.clock = inner.clock
        self._calls = calls
        self._now = now

    def _note(self, req: ChatRequest, res: ChatResult, t0: float, streamed: bool) -> None:
        self._calls.append(
            RecordedCall(
                req,
                res.text,
                req.stage or current_stage(),
                t0,
                self._now(),
                streamed,
                res.usage.input_tokens,
                res.usage.output_tokens,
            )
        )

    async def complete(self, request: ChatRequest) -> ChatResult:
        t0 = self._now()
        res = await self.inner.complete(request)
        self._note(request, res, t0, streamed=False)
        return res

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        t0 = self._now()
        async for ev in self.inner.stream(request):
            if isinstance(ev, Completed):
                self._note(request, ev.result, t0, streamed=True)
            yield ev

    async def aclose(self) -> None:
        await self.inner.aclose()


# -- the replay -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StageFigures:
    """One stage's calls in one way of running: median TTFT and decode rate, its span."""

    stage: str
    calls: int
    ttft_s: float | None
    decode_tps: float | None
    wall_s: float
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True, slots=True)
class WayFigures:
    """One way of running the calls: its measured wall and the token math's prediction."""

    way: str
    wall_s: float
    predicted_s: float
    stages: tuple[StageFigures, ...]


@dataclass(frozen=True, slots=True)
class BugFigures:
    """One bug's three walls (model calls only), the agent's whole wall, and the recording's."""

    case_id: str
    calls: int
    concurrent: WayFigures
    sequential: WayFigures
    one_call: WayFigures
    agent_s: float  # the whole run at the profile's speed, own work as measured
    recorded_wall_s: float  # the recording run's wall (fast oracle, real clock)
    validated: bool

    def as_json(self) -> dict[str, object]:
        return {
            "case": self.case_id,
            "calls": self.calls,
            "concurrent_s": self.concurrent.wall_s,
            "sequential_s": self.sequential.wall_s,
            "one_call_s": self.one_call.wall_s,
            "agent_s": self.agent_s,
            "recorded_wall_s": self.recorded_wall_s,
            "validated": self.validated,
            "predicted": {
                "concurrent_s": self.concurrent.predicted_s,
                "sequential_s": self.sequential.predicted_s,
                "one_call_s": self.one_call.predicted_s,
            },
            "stages": {
                w.way: [asdict(s) for s in w.stages]
                for w in (self.concurrent, self.sequential, self.one_call)
            },
        }


def _waited_for(calls: Sequence[RecordedCall]) -> list[list[int]]:
    """For each call, the calls that had ended before it started (its dependencies)."""
    return [
        [j for j, d in enumerate(calls) if d.ended_at <= c.started_at and j != i]
        for i, c in enumerate(calls)
    ]


def call_time(profile: SimProfile, input_tokens: int, output_tokens: int) -> float:
    """The token math for one call alone: TTFT + output tokens at the decode rate."""
    ttft = profile.ttft_base_s + input_tokens * profile.prefill_s_per_token
    return ttft + max(0, output_tokens - 1) / profile.decode_tps


def predict(
    profile: SimProfile, calls: Sequence[RecordedCall], one: tuple[int, int]
) -> tuple[float, float, float]:
    """The token math's (concurrent, sequential, one call) walls: the critical path of the
    calls' times over the recorded dependencies, their sum, one call on ``one`` (in, out)."""
    times = [call_time(profile, c.input_tokens, c.output_tokens) for c in calls]
    deps = _waited_for(calls)
    order = sorted(range(len(calls)), key=lambda i: calls[i].started_at)
    end: dict[int, float] = {}
    for i in order:
        end[i] = max((end[j] for j in deps[i]), default=0.0) + times[i]
    return max(end.values(), default=0.0), sum(times), call_time(profile, *one)


def one_call_request(calls: Sequence[RecordedCall]) -> tuple[ChatRequest, str]:
    """The one request holding every distinct prompt of ``calls``, and its answer: every
    distinct answer, in order. A prompt asked twice (the judge's quorum) is read once."""
    seen: set[tuple[tuple[str, str], ...]] = set()
    evidence: list[str] = []
    answers: list[str] = []
    for c in sorted(calls, key=lambda c: c.started_at):
        key = tuple((m.role, m.content) for m in c.request.messages)
        if key in seen:
            continue
        seen.add(key)
        evidence.extend(m.content for m in c.request.messages)
        answers.append(c.answer)
    answer = "\n\n".join(answers)
    prompt = "\n\n".join(evidence)
    req = ChatRequest.of(prompt, system=ONE_CALL_SYSTEM, max_tokens=len(answer) + 16)
    return replace(req, stage="one_call"), answer


async def replay(
    calls: Sequence[RecordedCall], profile: SimProfile, *, run_wall_s: float | None = None
) -> tuple[float | None, WayFigures, WayFigures, WayFigures]:
    """Run ``calls`` three ways on ``profile`` on a fake clock.

    Returns (the agent's whole wall with its own work, when the recorded
    run's ``run_wall_s`` is given: its end shifted by its calls' lateness;
    concurrent; sequential; one call). Each way runs on a fresh simulator,
    so none sees another's queue.
    """
    from agentrt.sim import in_process_model

    one_req, one_answer = one_call_request(calls)
    answers: dict[tuple[tuple[str, str], ...], str] = {
        tuple((m.role, m.content) for m in c.request.messages): c.answer for c in calls
    }

    def respond(req: ResponderInput) -> str:
        return answers.get(req.messages, one_answer)

    deps = _waited_for(calls)
    order = sorted(range(len(calls)), key=lambda i: calls[i].started_at)

    async def run_way(way: str) -> tuple[float, list[CallRecord]]:
        clock = FakeClock()
        recorder = MetricsRecorder(clock)
        async with (
            in_process_model(profile, clock=clock, responder=respond, recorder=recorder) as model,
            clock.autojumping(),
        ):
            t0 = clock.now()
            with recorder.activate():
                if way == "one_call":
                    await _call(model, one_req, streamed=True)
                    last = clock.now()
                elif way == "sequential":
                    for i in order:
                        await _call(model, calls[i].request, calls[i].streamed)
                    last = clock.now()
                else:
                    own = run_wall_s if way == "agent" else None
                    last = await _concurrent(model, clock, calls, deps, t0, own_until=own)
        return last - t0, list(recorder.records)

    agent_s = None if run_wall_s is None else round((await run_way("agent"))[0], 2)
    ways = []
    in_out = (0, 0)
    for way in ("concurrent", "sequential", "one_call"):
        wall, records = await run_way(way)
        if way == "one_call" and records:
            in_out = (records[0].input_tokens, records[0].output_tokens)
        ways.append((way, round(wall, 2), _stage_figures(records)))
    predicted = predict(profile, calls, in_out)
    figures = [
        WayFigures(w, s, round(p, 2), st) for (w, s, st), p in zip(ways, predicted, strict=True)
    ]
    return agent_s, figures[0], figures[1], figures[2]


async def _call(model: ChatModel, req: ChatRequest, streamed: bool) -> None:
    if not streamed:
        await model.complete(req)
        return
    async for _ in model.stream(req):
        pass


async def _concurrent(
    model: ChatModel,
    clock: FakeClock,
    calls: Sequence[RecordedCall],
    deps: Sequence[Sequence[int]],
    t0: float,
    *,
    own_until: float | None,
) -> float:
    """Each call once the calls it waited for have ended. With ``own_until`` (the recorded
    run's wall), also after the agent's own work between them, and the run's end after
    its work past the last call: each at its recorded time, shifted by the lateness of
    the calls it waited for (the end waits for all of them)."""
    own = own_until is not None
    ended: list[asyncio.Future[float]] = [asyncio.get_running_loop().create_future() for _ in calls]

    async def one(i: int) -> None:
        c = calls[i]
        ends = [await ended[j] for j in deps[i]]
        if own:
            late = max(
                (e - calls[j].ended_at for e, j in zip(ends, deps[i], strict=True)), default=0.0
            )
            await clock.sleep(t0 + c.started_at + max(0.0, late) - clock.now())
        await _call(model, c.request, c.streamed)
        ended[i].set_result(clock.now() - t0)

    async with asyncio.TaskGroup() as tg:
        for i in range(len(calls)):
            tg.create_task(one(i))
    last = max((f.result() for f in ended), default=0.0)
    if own_until is None:
        return t0 + last
    late = max((f.result() - c.ended_at for f, c in zip(ended, calls, strict=True)), default=0.0)
    await clock.sleep(t0 + own_until + max(0.0, late) - clock.now())
    return clock.now()


def _stage_figures(records: Sequence[CallRecord]) -> tuple[StageFigures, ...]:
    stages: dict[str, list[CallRecord]] = {}
    for r in records:
        stages.setdefault(r.stage, []).append(r)
    out = []
    for name, rs in stages.items():
        s = summarize(name, rs)
        out.append(
            StageFigures(
                name,
                s.model_calls,
                None if s.ttft_p50_s is None else round(s.ttft_p50_s, 2),
                None if s.decode_tps_p50 is None else round(s.decode_tps_p50, 1),
                round(s.span_s, 2),
                s.input_tokens,
                s.output_tokens,
            )
        )
    return tuple(out)


# -- recording a case -------------------------------------------------------------------


async def record_case(case_dir: Path) -> CaseRecording:
    """Run the whole agent on one case against its oracle, recording every model call."""
    from agentrt.sim import serving_in_thread
    from fixbugs.eval.archive import extract_tree
    from fixbugs.eval.gold_edits import load_gold_fix
    from fixbugs.eval.oracle import ORACLE_MODEL, OracleAnswers, oracle_app
    from fixbugs.eval.run import load_cases
    from fixbugs.inputs import load_inputs
    from fixbugs.inputs.walk import walk_text_files
    from fixbugs.pyenv.testenv import ensure_python_env
    from fixbugs.pyenv.userenv import Interpreter
    from fixbugs.run.agent import close_models, env_for_interpreter, models_from_config, run_bug
    from fixbugs.run.context import AgentOptions, Models

    [case] = load_cases(case_dir.parent, case_id=case_dir.name)
    python_bin = await asyncio.to_thread(ensure_python_env, case.python, case.requirements)
    calls: list[RecordedCall] = []
    with tempfile.TemporaryDirectory(prefix=f"fixbugs-tokenmath-{case.id}-") as tmp:
        tree = Path(tmp) / "repo"
        tree.mkdir()
        extract_tree(case.dir / case.archive, tree)
        fix = load_gold_fix(case.dir)
        decoys = sorted(p for p in walk_text_files(tree) if p.endswith(".py"))
        answers = OracleAnswers(fix, case.id, decoys=decoys)
        with serving_in_thread(oracle_app(answers.right)) as url:
            built = models_from_config(
                None, {"AGENTRT_BASE_URL": url, "AGENTRT_MODEL": ORACLE_MODEL}
            )
            t0 = time.monotonic()

            def now() -> float:
                return time.monotonic() - t0

            models = Models(
                map=RecordingModel(built.map, calls, now),
                judge=RecordingModel(built.judge, calls, now),
                judge_trust=built.judge_trust,
                map_trust=built.map_trust,
            )
            try:
                inputs = load_inputs(case.dir / "report.md", tree, test=case.test_command or None)
                env = env_for_interpreter(Interpreter(python_bin / "python", "case env"))
                options = replace(AgentOptions.for_env(env), test_timeout_s=300)
                t0 = time.monotonic()
                report = await run_bug(inputs, models=models, options=options)
                wall = time.monotonic() - t0
            finally:
                await close_models(built)
    return CaseRecording(case.id, round(wall, 2), tuple(calls), report.model.validated)


@dataclass(frozen=True, slots=True)
class TokenmathResult:
    """Every bug's figures and their means per bug (what ``--json`` writes)."""

    profile: SimProfile
    bugs: tuple[BugFigures, ...]
    skipped: tuple[str, ...]  # cases whose run made no model call

    def mean(self, pick: Callable[[BugFigures], float]) -> float:
        return round(statistics.fmean(pick(b) for b in self.bugs), 2)

    @property
    def ratio(self) -> float:
        """The concurrent wall over the one-call wall (sums over bugs)."""
        one = sum(b.one_call.wall_s for b in self.bugs)
        return round(sum(b.concurrent.wall_s for b in self.bugs) / one, 3) if one else 0.0

    def as_json(self) -> dict[str, object]:
        p = self.profile
        return {
            "profile": {
                "name": p.name,
                "ttft_base_s": p.ttft_base_s,
                "prefill_s_per_token": p.prefill_s_per_token,
                "decode_tps": p.decode_tps,
                "slots": p.slots,
            },
            "bugs": len(self.bugs),
            "skipped_no_calls": list(self.skipped),
            "concurrent_s": self.mean(lambda b: b.concurrent.wall_s),
            "sequential_s": self.mean(lambda b: b.sequential.wall_s),
            "one_call_s": self.mean(lambda b: b.one_call.wall_s),
            "concurrent_over_one_call": self.ratio,
            "agent_s": self.mean(lambda b: b.agent_s),
            "recorded_wall_s": self.mean(lambda b: b.recorded_wall_s),
            "predicted": {
                "concurrent_s": self.mean(lambda b: b.concurrent.predicted_s),
                "sequential_s": self.mean(lambda b: b.sequential.predicted_s),
                "one_call_s": self.mean(lambda b: b.one_call.predicted_s),
            },
            "per_bug": [b.as_json() for b in self.bugs],
            "timing": TIMING,
        }

    def render(self) -> str:
        """The side-by-side table: per bug the three walls and the prediction, per stage
        the TTFT, decode rate and wall of each way."""
        p = self.profile
        lines = [
            f"profile {p.name}: TTFT {p.ttft_base_s} s + {p.prefill_s_per_token * 1000:g} ms "
            f"per input token, {p.decode_tps:g} output tok/s per stream, {p.slots} served at once",
            TIMING + "; token math in brackets",
            f"{'bug':<14}{'calls':>6}{'concurrent':>18}{'sequential':>18}{'one call':>18}"
            f"{'conc/one':>10}{'agent':>10}",
        ]
        for b in self.bugs:
            ratio = b.concurrent.wall_s / b.one_call.wall_s if b.one_call.wall_s else 0.0
            lines.append(
                f"{b.case_id:<14}{b.calls:>6}"
                + "".join(_pair(w) for w in (b.concurrent, b.sequential, b.one_call))
                + f"{ratio:>10.2f}{b.agent_s:>9.1f}s"
            )
        means = [
            self.mean(lambda b: b.concurrent.wall_s),
            self.mean(lambda b: b.concurrent.predicted_s),
            self.mean(lambda b: b.sequential.wall_s),
            self.mean(lambda b: b.sequential.predicted_s),
            self.mean(lambda b: b.one_call.wall_s),
            self.mean(lambda b: b.one_call.predicted_s),
        ]
        lines.append(
            f"{'mean per bug':<20}"
            + "".join(
                f"{m:>9.1f}s ({pr:>5.1f})" for m, pr in zip(means[::2], means[1::2], strict=True)
            )
            + f"{self.ratio:>10.2f}{self.mean(lambda b: b.agent_s):>9.1f}s"
        )
        lines.append("per stage, all bugs: calls, median TTFT, median decode tok/s, summed wall")
        for way in ("concurrent", "sequential", "one_call"):
            lines.append(f"  {way}: " + "; ".join(_stage_cells(self.bugs, way)))
        lines.append(
            "agent: the whole run with these calls concurrent and its own work at the real time "
            f"it took (the recorded runs: {self.mean(lambda b: b.recorded_wall_s)} s per bug)"
        )
        if self.skipped:
            lines.append(f"no model call made (not replayed): {', '.join(self.skipped)}")
        return "\n".join(lines)


TIMING = (
    "model calls only, on the profile's fake clock (machine load does not enter); "
    "'agent' adds the agent's own work at the real time it took"
)


def _pair(w: WayFigures) -> str:
    return f"{w.wall_s:>9.1f}s ({w.predicted_s:>5.1f})"


def _stage_cells(bugs: Sequence[BugFigures], way: str) -> list[str]:
    agg: dict[str, list[StageFigures]] = {}
    for b in bugs:
        figures = {"concurrent": b.concurrent, "sequential": b.sequential, "one_call": b.one_call}
        for s in figures[way].stages:
            agg.setdefault(s.stage, []).append(s)
    cells = []
    for name, ss in agg.items():
        ttfts = [s.ttft_s for s in ss if s.ttft_s is not None]
        tps = [s.decode_tps for s in ss if s.decode_tps is not None]
        ttft = f"{statistics.median(ttfts):.2f} s" if ttfts else "- (not streamed)"
        rate = f"{statistics.median(tps):.1f}" if tps else "-"
        wall = sum(s.wall_s for s in ss)
        cells.append(
            f"{name} {sum(s.calls for s in ss)} calls, TTFT {ttft}, {rate} tok/s, {wall:.1f} s"
        )
    return cells


async def bench_tokenmath(
    recordings: Sequence[CaseRecording], profile: SimProfile
) -> TokenmathResult:
    """Replay each recording three ways (and the whole run); one-line error if none called."""
    bugs: list[BugFigures] = []
    for rec in recordings:
        if not rec.calls:
            continue
        agent_s, conc, seq, one = await replay(rec.calls, profile, run_wall_s=rec.wall_s)
        assert agent_s is not None
        bugs.append(
            BugFigures(
                rec.case_id, len(rec.calls), conc, seq, one, agent_s, rec.wall_s, rec.validated
            )
        )
    if not bugs:
        raise InputError("no case made a model call: nothing to replay")
    skipped = tuple(r.case_id for r in recordings if not r.calls)
    return TokenmathResult(profile, tuple(bugs), skipped)


# -- the command --------------------------------------------------------------------------


def tokenmath_command(
    cases: Annotated[Path, typer.Option(help="Case folder (shared/bugs format).")] = Path(
        "../shared/bugs/dev"
    ),
    profile: Annotated[str, typer.Option(help="Simulator latency profile of the model.")] = "7b",
    case: Annotated[str | None, typer.Option(help="Only this case id.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="At most this many cases.")] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the figures as JSON here.")
    ] = None,
) -> None:
    """The agent's model calls at a model's speed: concurrent, one after another, one call."""
    from agentrt.sim import get_profile
    from fixbugs.eval.run import load_cases

    prof = get_profile(profile)  # UnknownProfile: a one-line error
    if not cases.is_dir():
        raise InputError(f"no case folder at {cases}")
    selected = load_cases(cases, case_id=case, limit=limit)
    if not selected:
        raise InputError(f"no cases in {cases}" + (f" with id {case}" if case else ""))
    recordings = []
    for c in selected:
        rec = asyncio.run(record_case(c.dir))
        typer.echo(
            f"{rec.case_id}: recorded {len(rec.calls)} model calls in a {rec.wall_s} s run "
            f"(oracle, real clock){'' if rec.validated else '; no validated fix'}"
        )
        recordings.append(rec)
    result = asyncio.run(bench_tokenmath(recordings, prof))
    if json_out:
        json_out.write_text(json.dumps(result.as_json(), indent=2) + "\n")
    typer.echo(result.render())
