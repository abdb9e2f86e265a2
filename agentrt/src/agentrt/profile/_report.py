"""`agentrt profile RUN.json`: the breakdown and the what-ifs, as text and JSON."""

from __future__ import annotations

from dataclasses import asdict

from rich.console import Console
from rich.table import Table

from agentrt._json import JsonValue
from agentrt.profile._breakdown import RunBreakdown
from agentrt.profile._whatif import Estimate

__all__ = ["print_profile", "profile_json"]


def _share(part: float, whole: float) -> str:
    return f"{part / whole:.0%}" if whole > 0 else "-"


def profile_json(run: RunBreakdown, ests: list[Estimate]) -> dict[str, JsonValue]:
    dom = run.dominant
    return {
        "wall_s": run.wall_s,
        "dominant_stage": dom.stage if dom else None,
        # what the run did not measure is null, not a default
        "latency_model": {
            "ttft_base_s": run.latency.ttft_base_s if run.latency_fitted else None,
            "prefill_s_per_token": (
                run.latency.prefill_s_per_token if run.latency_fitted else None
            ),
            "decode_tps": run.latency.decode_tps if run.decode_measured else None,
            "fitted_from_run": run.latency_fitted,
            "decode_measured": run.decode_measured,
        },
        "stages": [
            {**asdict(s), "model_s": s.model_s, "model_s_per_call": s.model_s_per_call}
            for s in run.stages
        ],
        "estimates": [{**asdict(e), "helps": e.helps} for e in ests],
    }


def print_profile(console: Console, run: RunBreakdown, ests: list[Estimate]) -> None:
    t = Table(title=f"where the time went ({run.wall_s:.2f} s of wall time)")
    for col in (
        "stage",
        "span s",
        "share",
        "calls",
        "conc.",
        "queue",
        "prefill",
        "decode",
        "unsplit",
        "retries",
        "tools",
    ):
        t.add_column(col, justify="left" if col == "stage" else "right")
    for s in run.stages:
        total = s.model_s + s.tool_s
        t.add_row(
            s.stage,
            f"{s.span_s:.2f}",
            _share(s.span_s, run.wall_s),
            f"{s.model_calls}+{s.tool_calls}t" if s.tool_calls else str(s.model_calls),
            f"{s.concurrency:.1f}",
            *(f"{v:.2f} ({_share(v, total)})" for v in s.parts().values()),
        )
    console.print(t)
    dom = run.dominant
    if dom is not None:
        parts = dom.parts()
        biggest = max(parts, key=lambda k: parts[k]).removesuffix("_s")
        console.print(
            f"dominant stage: [bold]{dom.stage}[/] — {dom.span_s:.2f} s, "
            f"{_share(dom.span_s, run.wall_s)} of the run; most of it {biggest}"
        )
    lm = run.latency
    if run.latency_fitted:
        decode = (
            f"decode {lm.decode_tps:.1f} tok/s (measured from streams)"
            if run.decode_measured
            else "decode rate not measured (no streamed call)"
        )
        console.print(
            f"latency model (fitted to this run's calls): TTFT {lm.ttft_base_s:.3f} s + "
            f"{lm.prefill_s_per_token * 1e3:.4f} ms/token, {decode}"
        )
    else:
        console.print(
            "[yellow]not measured[/]: this run recorded no TTFT (no streamed call), so "
            "prefill and decode cannot be told apart; their time is shown as 'unsplit' "
            "and no decode rate is given"
        )
    console.print("[bold]what if[/] (estimates, seconds of the stage's span unless noted):")
    for e in ests:
        if e.unknown:
            console.print(f"  {e.stage}: {e.change}: [yellow]{e.note}[/]")
            continue
        if e.estimate_s is None:
            console.print(f"  {e.stage}: {e.change}: [yellow]will not help[/] — {e.note}")
            continue
        verdict = "[green]helps[/]" if e.helps else "no gain"
        console.print(
            f"  {e.stage}: {e.change}: {e.current_s:.2f} s -> {e.estimate_s:.2f} s ({verdict})"
            + (f" — {e.note}" if e.note else "")
        )
        for a in e.assumptions:
            console.print(f"      assumes {a}", style="dim")
