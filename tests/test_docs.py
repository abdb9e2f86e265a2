"""The README and docs/ stay true: short, linked, and the CLI reference current.

A newcomer reads the README (two commands, one example, where to go next);
the reference lives in docs/, and docs/cli.md is generated from the
commands' own definitions, so an option added without regenerating it fails
here (``python -m fixbugs.refdocs``); docs/service-api.md likewise from the
service's OpenAPI document.
"""

from __future__ import annotations

import re
from pathlib import Path

import typer
from typer.core import TyperGroup, TyperOption

from agentrt._commands import app as agentrt_app
from fixbugs import refdocs
from fixbugs.cli import app as fixbugs_app

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
CLI_MD = DOCS / "cli.md"
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)  # a link shown as code is no link


def test_readme_is_short_and_starts_with_the_two_commands() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= 150
    block = lines[lines.index("```sh") + 1 : lines.index("```")]
    assert [line.split()[0] for line in block] == ["./scripts/demo", "./scripts/test"]
    assert all((ROOT / line.split()[0]).is_file() for line in block)


def test_every_relative_link_names_a_file_that_exists() -> None:
    pages = [README, ROOT / "SECURITY.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = [
        f"{page.relative_to(ROOT)} -> {target}"
        for page in pages
        for target in _LINK.findall(_CODE.sub("", page.read_text()))
        if "://" not in target and not (page.parent / target).exists()
    ]
    assert not broken


def test_generated_references_are_what_the_code_writes() -> None:
    stale = [name for name, page in refdocs.PAGES.items() if (DOCS / name).read_text() != page()]
    assert not stale, "run: python -m fixbugs.refdocs"


def _options(path: str, cmd: object) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for param in getattr(cmd, "params", ()):
        if isinstance(param, TyperOption) and not param.hidden:
            found += [(path, opt) for opt in param.opts if opt != "--help"]
    if isinstance(cmd, TyperGroup):
        for name, sub in cmd.commands.items():
            if not getattr(sub, "hidden", False):
                found += _options(f"{path} {name}", sub)
    return found


def test_every_cli_option_appears_in_its_commands_section() -> None:
    text = CLI_MD.read_text()
    sections = dict(re.findall(r"^## `([^`]+)`\n(.*?)(?=^## |\Z)", text, re.M | re.S))
    options = _options("fixbugs", typer.main.get_command(fixbugs_app))
    options += _options("agentrt", typer.main.get_command(agentrt_app))
    assert len(options) > 100  # the walk found the commands, not an empty tree
    missing = [
        f"{path} {opt}"
        for path, opt in options
        if not re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", sections.get(path, ""))
    ]
    assert not missing


def test_every_service_route_is_in_the_api_reference(tmp_path: Path) -> None:
    from fastapi.routing import APIRoute

    from fixbugs.service.serve import ServeConfig, build_app

    app, _, _ = build_app(
        ServeConfig(workspace=tmp_path, whole_bug=True), models=None, run_workers=False
    )
    routes = [
        f"`{method} {route.path}`"
        for route in app.routes
        if isinstance(route, APIRoute) and route.include_in_schema
        for method in sorted(route.methods or ())
    ]
    assert len(routes) >= 8
    text = (DOCS / "service-api.md").read_text()
    assert not [r for r in routes if r not in text]
