"""The reference pages written from the code: docs/cli.md and docs/service-api.md.

Every command and option is read from the typer apps of ``fixbugs`` and
``agentrt`` (their click commands: names, arguments, options, defaults and
help texts), and every HTTP route from the service's own OpenAPI document,
so neither page can drift from what the code accepts: ``python -m
fixbugs.refdocs`` rewrites both, and a test fails when a file differs from
what this module writes.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

__all__ = ["PAGES", "CommandDoc", "OptionDoc", "cli_md", "commands", "service_api_md"]

_HEADER = """\
# Command-line reference

Generated from the commands' own definitions by `python -m fixbugs.refdocs` (a test fails
when this file is out of date). `fixbugs COMMAND --help` prints the same.
"""


@dataclass(frozen=True)
class OptionDoc:
    """One parameter of a command, as ``--help`` shows it."""

    usage: str  # "--repo <path>", "--apply / --no-apply", or an argument's name
    help: str  # its help text with the default, as ``--help`` prints it


@dataclass(frozen=True)
class CommandDoc:
    """A command (``fixbugs run``, ``agentrt sim serve``) and its parameters."""

    path: str
    help: str
    params: tuple[OptionDoc, ...]


def _apps() -> list[tuple[str, typer.Typer]]:
    from agentrt._commands import app as agentrt_app
    from fixbugs.cli import app as fixbugs_app

    return [("fixbugs", fixbugs_app), ("agentrt", agentrt_app)]


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


def _param(param: object, ctx: typer.Context) -> OptionDoc | None:
    if isinstance(param, TyperArgument):
        return OptionDoc(param.name or "", _one_line(param.help))
    if not isinstance(param, TyperOption) or param.hidden:
        return None
    record = param.get_help_record(ctx)
    if record is None or "--help" in param.opts:
        return None
    usage, help_text = record
    # a default under the home folder reads the same on every machine
    return OptionDoc(usage, _one_line(help_text).replace(str(Path.home()), "~"))


def _walk(
    path: str, cmd: TyperCommand | TyperGroup, parent: typer.Context | None
) -> Iterator[CommandDoc]:
    ctx = typer.Context(cmd, info_name=path.split()[-1], parent=parent)
    params = tuple(p for p in (_param(x, ctx) for x in cmd.params) if p is not None)
    yield CommandDoc(path, _one_line(cmd.help or cmd.short_help), params)
    if isinstance(cmd, TyperGroup):
        for name in sorted(cmd.commands):
            sub = cmd.commands[name]
            if isinstance(sub, TyperCommand | TyperGroup) and not sub.hidden:
                yield from _walk(f"{path} {name}", sub, ctx)


def commands() -> list[CommandDoc]:
    """Every command of ``fixbugs`` and ``agentrt``, groups before their subcommands."""
    out: list[CommandDoc] = []
    for name, app in _apps():
        top = typer.main.get_command(app)
        if isinstance(top, TyperCommand | TyperGroup):
            out.extend(_walk(name, top, None))
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def cli_md() -> str:
    """docs/cli.md's text."""
    parts = [_HEADER]
    for cmd in commands():
        parts.append(f"\n## `{cmd.path}`\n\n")
        if cmd.help:
            parts.append(cmd.help + "\n")
        if not cmd.params:
            continue
        parts.append("\n| parameter | what it does |\n| --- | --- |\n")
        for p in cmd.params:
            parts.append(f"| `{_cell(p.usage)}` | {_cell(p.help)} |\n")
    return "".join(parts)


_API_HEADER = """\
# Service API reference

The routes of `fixbugs serve`, generated from its OpenAPI document by `python -m
fixbugs.refdocs` (a test fails when this file is out of date). A running server serves the
whole document, schemas included, at `/openapi.json`; [service.md](service.md) says how the
service runs. When the server has keys, every route but `/healthz` and `/metrics` needs one
(`X-API-Key: KEY` or `Authorization: Bearer KEY`) and answers only its tenant's bugs;
`/metrics` needs `--metrics-key` where one is set.
"""


def service_api_md() -> str:
    """docs/service-api.md's text: one row per route, from the app's OpenAPI document."""
    import tempfile

    from fixbugs.service.serve import ServeConfig, build_app

    with tempfile.TemporaryDirectory(prefix="fixbugs-refdocs-") as tmp:
        cfg = ServeConfig(workspace=Path(tmp), whole_bug=True)
        app, _, _ = build_app(cfg, models=None, run_workers=False)
        spec = app.openapi()
    parts = [
        _API_HEADER,
        "\n| route | what it does | body | answers |\n| --- | --- | --- | --- |\n",
    ]
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            what = _one_line((op.get("description") or op.get("summary") or "").split("\n\n")[0])
            body = op.get("requestBody", {}).get("content", {})
            kinds = ", ".join(f"`{k}`" for k in body)
            codes = ", ".join(sorted(op.get("responses", {})))
            parts.append(f"| `{method.upper()} {path}` | {_cell(what)} | {kinds} | {codes} |\n")
    return "".join(parts)


# each generated page, by its name under docs/
PAGES = {"cli.md": cli_md, "service-api.md": service_api_md}


if __name__ == "__main__":
    docs = Path(sys.argv[1] if len(sys.argv) > 1 else "docs")
    for name, page in PAGES.items():
        (docs / name).write_text(page())
