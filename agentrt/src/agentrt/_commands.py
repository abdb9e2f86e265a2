"""The `agentrt` commands (the ``cli`` extra: typer and rich).

The entry point is :func:`agentrt.cli.main`, which says which extra to
install when this module cannot be imported. A command whose own extra is
missing (``sim``, ``report``, ...) is still listed and says the same;
``bench``, whose benchmarks are left out of the wheel, says to run from a
source checkout.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from agentrt._errors import UserError

__all__ = ["app"]

app = typer.Typer(
    name="agentrt",
    help="Run LLM agent work the way distributed systems are run.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()

# agentrt.bench ships with the source, not the wheel (agentrt/pyproject.toml)
BENCH_MODULES = frozenset({"agentrt.bench", "agentrt.bench.harness"})


def _needs_extra(name: str, extra: str, exc: ModuleNotFoundError) -> None:
    """Register ``name`` as a command that says which extra it needs."""

    @app.command(
        name,
        help=f"(needs the '{extra}' extra)",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    )
    def missing() -> None:
        raise UserError(
            f"`agentrt {name}` needs the '{extra}' extra ({exc.name} is not installed): "
            f"pip install 'agentrt[{extra}]'"
        )


def _attach(name: str, extra: str, attach: Callable[[], None]) -> None:
    try:
        attach()
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] == "agentrt":
            raise
        _needs_extra(name, extra, exc)


def _attach_sim() -> None:
    from agentrt.sim._cli import sim_app

    app.add_typer(sim_app, name="sim", help="The OpenAI-compatible provider simulator.")


_attach("sim", "sim", _attach_sim)


def _attach_report() -> None:
    from agentrt.report._cli import report_command

    app.command("report")(report_command)


_attach("report", "report", _attach_report)


def _attach_profile() -> None:
    @app.command("profile")
    def profile_cmd(
        run: Annotated[Path, typer.Argument(help="Metrics JSON of a recorded run.")],
        json_path: Annotated[
            Path | None, typer.Option("--json", help="Also write the profile as JSON.")
        ] = None,
        parallel: Annotated[int, typer.Option(help="Calls at once for the what-if.")] = 16,
        smaller_speedup: Annotated[float, typer.Option(help="Smaller model's speed, x.")] = 3.0,
        cached_share: Annotated[float, typer.Option(help="Input share a cache serves.")] = 0.8,
    ) -> None:
        """Where a recorded run's time went per stage, and what changes would buy."""
        from agentrt.profile import WhatIf, breakdown, estimates, load_run, print_profile
        from agentrt.profile import profile_json as to_json

        bd = breakdown(load_run(run))
        ests = estimates(bd, WhatIf(parallel, smaller_speedup, cached_share))
        print_profile(console, bd, ests)
        if json_path:
            json_path.write_text(json.dumps(to_json(bd, ests), indent=2) + "\n")


_attach_profile()


def _attach_worker() -> None:
    from agentrt.pipeline._cli import worker

    app.command("worker")(worker)


_attach("worker", "redis", _attach_worker)

JsonOpt = Annotated[
    Path | None, typer.Option("--json", help="Also write the figures as JSON to this path.")
]


@app.command()
def plan(
    output_tokens: Annotated[int, typer.Option(help="Output tokens of the whole job.")],
    tps: Annotated[float, typer.Option(help="Decode rate of one stream, tokens/s.")] = 50.0,
    parallel: Annotated[int, typer.Option(help="Concurrent calls of the fan-out.")] = 16,
    input_tokens: Annotated[int, typer.Option(help="Input tokens of the whole job.")] = 0,
    ttft: Annotated[float, typer.Option(help="Base time to first token, s.")] = 0.5,
    prefill_ms: Annotated[float, typer.Option(help="Prefill cost, ms per input token.")] = 0.05,
    slots: Annotated[int | None, typer.Option(help="Calls the endpoint serves at once.")] = None,
    aggregate_tps: Annotated[
        float | None, typer.Option(help="Endpoint's total decode tokens/s.")
    ] = None,
    json_path: JsonOpt = None,
) -> None:
    """Estimate one big call against a fan-out, from the latency model."""
    from agentrt.tokens._plan import make_plan

    try:
        p = make_plan(
            output_tokens=output_tokens,
            tps=tps,
            parallel=parallel,
            input_tokens=input_tokens,
            ttft_base_s=ttft,
            prefill_ms_per_token=prefill_ms,
            slots=slots,
            aggregate_tps=aggregate_tps,
        )
    except ValueError as exc:
        raise UserError(str(exc)) from None
    console.print(
        f"one call      : [bold]{p.single_s:,.1f} s[/]  "
        f"(TTFT {p.model.ttft(input_tokens):.2f} s + {output_tokens:,} tokens / {tps:g} tok/s)"
    )
    f = p.fanout
    console.print(
        f"fan-out x{parallel:<4}: [bold]{f.seconds:,.1f} s[/]  "
        f"(TTFT {p.model.ttft(-(-input_tokens // parallel)):.2f} s + "
        f"{f.tokens_per_call:,.0f} tokens / {f.per_stream_tps:g} tok/s"
        + (f", {f.waves} waves" if f.waves > 1 else "")
        + ")"
    )
    console.print(f"speed-up      : {p.speedup:.1f}x")
    console.print("assumptions:")
    for a in p.assumptions:
        console.print(f"  - {a}")
    if json_path:
        json_path.write_text(json.dumps(p.to_dict(), indent=2) + "\n")


@app.command()
def bench(
    name: Annotated[str | None, typer.Argument(help="Benchmark to run.")] = None,
    json_path: JsonOpt = None,
    option: Annotated[
        list[str] | None, typer.Option("--set", help="Override an option: KEY=VALUE.")
    ] = None,
    list_all: Annotated[bool, typer.Option("--list", help="List the benchmarks.")] = False,
) -> None:
    """Run a named benchmark; prints ratios measured side by side in one run."""
    try:
        from agentrt.bench.harness import get_benchmark, list_benchmarks
    except ModuleNotFoundError as exc:
        if exc.name not in BENCH_MODULES:
            raise  # a benchmark's own dependency: the bench extra names it
        raise UserError(
            "the benchmarks are not in agentrt's wheel; run them from a source checkout "
            "installed with: pip install -e './agentrt[bench]'"
        ) from None

    if list_all or name is None:
        for b in list_benchmarks():
            console.print(f"[bold]{b.name:14}[/] {b.description}")
        return
    run = get_benchmark(name).configure(option or [])
    console.print(f"[dim]running benchmark {name} with {dataclasses.asdict(run.options)}[/]")
    result = asyncio.run(run.start())
    table = Table(title=f"bench {name}", show_header=True)
    table.add_column("figure")
    table.add_column("value", justify="right")
    for k, v in result.figures.items():
        table.add_row(k, _fmt(v))
    console.print(table)
    for label, ratio in result.ratios:
        console.print(f"ratio  {label}: [bold]{ratio:.3f}[/]")
    for label, ok in result.checks:
        console.print(f"check  {label}: " + ("[green]holds[/]" if ok else "[red]does not hold[/]"))
    for note in result.notes:
        console.print(f"[dim]note   {note}[/]")
    console.print_json(json.dumps(result.to_json_obj()))
    if json_path:
        result.write_json(json_path)


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return f"{v:,.4g}"
    return str(v)


@app.command()
def demo(
    json_path: JsonOpt = None,
    config: Annotated[Path | None, typer.Option(help="Config TOML file.")] = None,
    chunks: Annotated[int, typer.Option(help="Log chunks to map over.")] = 4,
) -> None:
    """A small scatter-gather on the embedded model, with per-call metrics.

    Chunks whose calls fail after their retries are reported as failed
    items; the JSON is written whatever happened. Exit status 0 when at
    least one chunk was summarized, 3 when every chunk failed.
    """
    from agentrt._demo import run_demo

    result = asyncio.run(run_demo(console, json_path=json_path, config=config, chunks=chunks))
    if result.exit_code:
        raise typer.Exit(result.exit_code)


@app.command()
def version() -> None:
    """Print the version."""
    from importlib.metadata import version as v

    console.print(v("agentrt"))
