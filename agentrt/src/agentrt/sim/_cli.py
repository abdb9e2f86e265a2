"""``agentrt sim …``: run the provider simulator as a real server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentrt._errors import UserError
from agentrt.sim._profile import PROFILES, SimProfile, get_profile, load_profile_file

__all__ = ["sim_app"]

sim_app = typer.Typer(help="The OpenAI-compatible provider simulator.", no_args_is_help=True)


@sim_app.callback()
def _group() -> None:
    """The OpenAI-compatible provider simulator (keeps ``serve`` a subcommand)."""


def _resolve(
    profile: str, profile_file: Path | None, time_scale: float | None, seed: int | None
) -> SimProfile:
    overrides: dict[str, float] = {}  # time_scale, seed
    if time_scale is not None:
        overrides["time_scale"] = time_scale
    if seed is not None:
        overrides["seed"] = seed
    if profile_file is not None:
        return load_profile_file(profile_file).with_overrides(**overrides)
    return get_profile(profile, **overrides)


@sim_app.command()
def serve(
    port: Annotated[int, typer.Option(help="TCP port to listen on.")] = 8000,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    profile: Annotated[
        str, typer.Option(help=f"Named profile: {', '.join(sorted(PROFILES))}.")
    ] = "default",
    profile_file: Annotated[
        Path | None, typer.Option(help="TOML/JSON profile file (overrides --profile).")
    ] = None,
    time_scale: Annotated[
        float | None, typer.Option(help="Run this many times faster than real time.")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Seed for faults and answers.")] = None,
) -> None:
    """Serve /v1/chat/completions, /v1/models and /sim/stats on HOST:PORT."""
    try:
        prof = _resolve(profile, profile_file, time_scale, seed)
    except UserError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    from agentrt.sim._server import serve as run_server

    typer.echo(
        f"agentrt sim: profile {prof.name!r} on http://{host}:{port}/v1 "
        f"(models: {', '.join(prof.models)}; time x{prof.time_scale:g})",
        err=True,
    )
    run_server(prof, host=host, port=port)
