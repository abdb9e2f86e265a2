"""``fixbugs bench tokenmath``'s command: record each case, replay it four ways, print them."""

from __future__ import annotations

import asyncio
import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fixbugs.errors import InputError

if TYPE_CHECKING:  # the simulator (starlette) is imported when the bench runs, not with the CLI
    from agentrt.sim import SimProfile
from fixbugs.eval.tokenmath._record import CaseRecording, record_case
from fixbugs.eval.tokenmath._replay import WAYS, BugFigures, StageFigures, WayFigures, replay


@dataclass(frozen=True, slots=True)
class TokenmathResult:
    """Every bug's figures and their means per bug (what ``--json`` writes)."""

    profile: SimProfile
    bugs: tuple[BugFigures, ...]
    skipped: tuple[str, ...]  # cases whose run made no model call

    def mean(self, pick: Callable[[BugFigures], float]) -> float:
        return round(statistics.fmean(pick(b) for b in self.bugs), 2)

    def over(self, pick: Callable[[BugFigures], WayFigures]) -> float:
        """The concurrent wall over another way's (sums over bugs)."""
        other = sum(pick(b).wall_s for b in self.bugs)
        return round(sum(b.concurrent.wall_s for b in self.bugs) / other, 3) if other else 0.0

    @property
    def ratio(self) -> float:
        """The concurrent wall over the one-call wall (the same evidence)."""
        return self.over(lambda b: b.one_call)

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
            "whole_bug_s": self.mean(lambda b: b.whole_bug.wall_s),
            "concurrent_over_one_call": self.ratio,
            "concurrent_over_whole_bug": self.over(lambda b: b.whole_bug),
            "agent_s": self.mean(lambda b: b.agent_s),
            "recorded_wall_s": self.mean(lambda b: b.recorded_wall_s),
            "predicted": {
                "concurrent_s": self.mean(lambda b: b.concurrent.predicted_s),
                "sequential_s": self.mean(lambda b: b.sequential.predicted_s),
                "one_call_s": self.mean(lambda b: b.one_call.predicted_s),
                "whole_bug_s": self.mean(lambda b: b.whole_bug.predicted_s),
            },
            "per_bug": [b.as_json() for b in self.bugs],
            "timing": TIMING,
        }

    def render(self) -> str:
        """The side-by-side table: per bug the four walls and the prediction, per stage
        the TTFT, decode rate and wall of each way."""
        p = self.profile
        lines = [
            f"profile {p.name}: TTFT {p.ttft_base_s} s + {p.prefill_s_per_token * 1000:g} ms "
            f"per input token, {p.decode_tps:g} output tok/s per stream, {p.slots} served at once",
            TIMING + "; token math in brackets",
            f"{'bug':<14}{'calls':>6}{'concurrent':>18}{'sequential':>18}{'one call':>18}"
            f"{'whole bug':>18}{'conc/one':>10}{'conc/whole':>11}{'agent':>10}",
        ]
        for b in self.bugs:
            lines.append(
                f"{b.case_id:<14}{b.calls:>6}"
                + "".join(_pair(w) for w in b.ways())
                + f"{_div(b.concurrent, b.one_call):>10.2f}{_div(b.concurrent, b.whole_bug):>11.2f}"
                + f"{b.agent_s:>9.1f}s"
            )
        cells = "".join(
            f"{self.mean(_wall(way)):>9.1f}s ({self.mean(_wall(way, predicted=True)):>5.1f})"
            for way in range(len(WAYS))
        )
        lines.append(
            f"{'mean per bug':<20}{cells}{self.ratio:>10.2f}"
            f"{self.over(lambda b: b.whole_bug):>11.2f}{self.mean(lambda b: b.agent_s):>9.1f}s"
        )
        lines.append(
            "one call: every prompt the agent's calls sent, once, in one request (the same "
            "evidence); whole bug: that and the report and every Python file of the repository "
            "(an agent that narrows nothing); both answer what the calls answered"
        )
        lines.append("per stage, all bugs: calls, median TTFT, median decode tok/s, summed wall")
        for way in WAYS:
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


def _wall(way: int, *, predicted: bool = False) -> Callable[[BugFigures], float]:
    """A bug's measured (or predicted) wall of one way, by its index in :data:`WAYS`."""

    def pick(b: BugFigures) -> float:
        w = b.ways()[way]
        return w.predicted_s if predicted else w.wall_s

    return pick


def _div(a: WayFigures, b: WayFigures) -> float:
    return a.wall_s / b.wall_s if b.wall_s else 0.0


def _stage_cells(bugs: Sequence[BugFigures], way: str) -> list[str]:
    agg: dict[str, list[StageFigures]] = {}
    for b in bugs:
        for s in b.ways()[WAYS.index(way)].stages:
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
    """Replay each recording four ways (and the whole run); one-line error if none called."""
    bugs: list[BugFigures] = []
    for rec in recordings:
        if not rec.calls:
            continue
        r = await replay(rec.calls, profile, bug_text=rec.bug_text, run_wall_s=rec.wall_s)
        assert r.agent_s is not None
        bugs.append(
            BugFigures(
                rec.case_id,
                len(rec.calls),
                r.concurrent,
                r.sequential,
                r.one_call,
                r.whole_bug,
                r.agent_s,
                rec.wall_s,
                rec.validated,
            )
        )
    if not bugs:
        raise InputError("no case made a model call: nothing to replay")
    skipped = tuple(r.case_id for r in recordings if not r.calls)
    return TokenmathResult(profile, tuple(bugs), skipped)


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
    """The agent's model calls at a model's speed: concurrent, one after another, one call,
    and the whole bug in one call."""
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
