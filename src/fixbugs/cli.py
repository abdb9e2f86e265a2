"""The `fixbugs` command line."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="fixbugs",
    help="FixBugs, an AI debugging agent on agentrt.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def version() -> None:
    """Print the version."""
    from importlib.metadata import version as v

    typer.echo(v("fixbugs"))


@app.callback()
def _root() -> None:
    """FixBugs, an AI debugging agent on agentrt (the agent's commands are not built yet)."""


def main() -> None:
    app()
