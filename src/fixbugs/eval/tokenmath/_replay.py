"""Replay: recorded calls against the simulator on a fake clock, three ways and a fourth.

Concurrent as the agent scheduled them, one after another, and as one call;
the token math's prediction beside them. The fourth, the whole bug in one
call, is the design FixBugs replaces rather than its own calls rearranged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from agentrt import FakeClock
from agentrt.llm import ChatModel, ChatRequest
from agentrt.metrics import CallRecord, MetricsRecorder, summarize

if TYPE_CHECKING:  # the simulator (starlette) is imported when the bench runs, not with the CLI
    from agentrt.sim import ResponderInput, SimProfile
from fixbugs.eval.tokenmath._record import RecordedCall

ONE_CALL_SYSTEM = (
    "You are debugging one bug. Below is all the evidence; answer every question it asks, in order."
)
WAYS = ("concurrent", "sequential", "one_call", "whole_bug")


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
    whole_bug: WayFigures  # one call holding the report and every Python file of the repository
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
            "whole_bug_s": self.whole_bug.wall_s,
            "agent_s": self.agent_s,
            "recorded_wall_s": self.recorded_wall_s,
            "validated": self.validated,
            "predicted": {
                "concurrent_s": self.concurrent.predicted_s,
                "sequential_s": self.sequential.predicted_s,
                "one_call_s": self.one_call.predicted_s,
                "whole_bug_s": self.whole_bug.predicted_s,
            },
            "stages": {w.way: [asdict(s) for s in w.stages] for w in self.ways()},
        }

    def ways(self) -> tuple[WayFigures, WayFigures, WayFigures, WayFigures]:
        return (self.concurrent, self.sequential, self.one_call, self.whole_bug)


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
    profile: SimProfile,
    calls: Sequence[RecordedCall],
    one: tuple[int, int],
    whole: tuple[int, int],
) -> tuple[float, float, float, float]:
    """The token math's (concurrent, sequential, one call, whole bug) walls: the critical
    path of the calls' times over the recorded dependencies, their sum, one call on ``one``
    (in, out) and one on ``whole``."""
    times = [call_time(profile, c.input_tokens, c.output_tokens) for c in calls]
    deps = _waited_for(calls)
    order = sorted(range(len(calls)), key=lambda i: calls[i].started_at)
    end: dict[int, float] = {}
    for i in order:
        end[i] = max((end[j] for j in deps[i]), default=0.0) + times[i]
    return (
        max(end.values(), default=0.0),
        sum(times),
        call_time(profile, *one),
        call_time(profile, *whole),
    )


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


def whole_bug_request(calls: Sequence[RecordedCall], bug_text: str) -> tuple[ChatRequest, str]:
    """The one call of an agent that narrows nothing: the one-call request with the whole
    bug (``bug_text``: the report and every Python file of the repository) after it, and
    the same answer. FixBugs' own stages read those files instead (index, ranking), so its
    calls see only what they chose; this is the call that choice replaces."""
    req, answer = one_call_request(calls)
    prompt = req.messages[-1].content + "\n\n" + bug_text
    whole = ChatRequest.of(prompt, system=ONE_CALL_SYSTEM, max_tokens=len(answer) + 16)
    return replace(whole, stage="whole_bug"), answer


@dataclass(frozen=True, slots=True)
class Replayed:
    """The four ways' figures of one run's calls, and the whole run's wall when asked."""

    agent_s: float | None
    concurrent: WayFigures
    sequential: WayFigures
    one_call: WayFigures
    whole_bug: WayFigures


async def replay(
    calls: Sequence[RecordedCall],
    profile: SimProfile,
    *,
    bug_text: str = "",
    run_wall_s: float | None = None,
) -> Replayed:
    """Run ``calls`` four ways on ``profile`` on a fake clock.

    Concurrent, sequential, one call, and the whole bug in one call (the
    one call with ``bug_text`` added); with the recorded run's
    ``run_wall_s``, also the agent's whole wall with its own work (its end
    shifted by its calls' lateness). Each way runs on a fresh simulator, so
    none sees another's queue.
    """
    from agentrt.sim import in_process_model

    one_req, one_answer = one_call_request(calls)
    whole_req, _ = whole_bug_request(calls, bug_text)
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
                if way in ("one_call", "whole_bug"):
                    await _call(model, one_req if way == "one_call" else whole_req, streamed=True)
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
    in_out = {"one_call": (0, 0), "whole_bug": (0, 0)}
    for way in WAYS:
        wall, records = await run_way(way)
        if way in in_out and records:
            in_out[way] = (records[0].input_tokens, records[0].output_tokens)
        ways.append((way, round(wall, 2), _stage_figures(records)))
    predicted = predict(profile, calls, in_out["one_call"], in_out["whole_bug"])
    conc, seq, one, whole = (
        WayFigures(w, s, round(p, 2), st) for (w, s, st), p in zip(ways, predicted, strict=True)
    )
    return Replayed(agent_s, conc, seq, one, whole)


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
