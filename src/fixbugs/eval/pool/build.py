"""``fixbugs pool build``: every source's cases built into the pool, one line each.

Each source is a builder ``(out, mirrors, only=…) -> list[PoolBuild]`` in
:data:`SOURCES`; the command runs each, prints one line per case as it
comes (built, or skipped and why) and then a summary per project. It needs
the public mirrors the ``fetch`` tool brings (``/work/.mirror``), Python 3.8
and the package registry for the venvs; a rerun builds only what is not
built yet.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Protocol

import typer
from rich.console import Console
from rich.table import Table

from fixbugs.errors import InputError
from fixbugs.eval.pool.bugsinpy import PROJECTS, build_bugsinpy
from fixbugs.eval.pool.outcome import PoolBuild
from fixbugs.eval.pool.swebench import build_sympy
from fixbugs.inputs.inert import terminal

__all__ = [
    "SOURCES",
    "ProjectCount",
    "build_command",
    "count_by_project",
    "plain",
    "pool_app",
]


class Source(Protocol):
    """What the command calls: ``projects`` empty means the source's own default."""

    def __call__(
        self,
        out: Path,
        mirrors: Path,
        *,
        only: Collection[str] = (),
        projects: Collection[str] = (),
        issues: Path | None = None,
        on_case: Callable[[PoolBuild], None] | None = None,
    ) -> list[PoolBuild]: ...


class PlainBuilder(Protocol):
    """A builder of one project's cases: ``(out, mirrors, only=…, on_case=…)``."""

    def __call__(
        self,
        out: Path,
        mirrors: Path,
        *,
        only: Collection[str] = (),
        on_case: Callable[[PoolBuild], None] | None = None,
    ) -> list[PoolBuild]: ...


def plain(builder: PlainBuilder, project: str) -> Source:
    """A :class:`Source` of a builder of one ``project`` (which takes no ``projects`` and no
    ``issues``): not run when ``projects`` leaves it out."""

    def source(
        out: Path,
        mirrors: Path,
        *,
        only: Collection[str] = (),
        projects: Collection[str] = (),
        issues: Path | None = None,
        on_case: Callable[[PoolBuild], None] | None = None,
    ) -> list[PoolBuild]:
        if projects and project not in projects:
            return []
        return builder(out, mirrors, only=only, on_case=on_case)

    return source


SOURCES: tuple[tuple[str, Source], ...] = (
    ("bugsinpy", build_bugsinpy),
    ("swebench", plain(build_sympy, "sympy")),
)

DEFAULT_OUT = Path.home() / ".cache" / "fixbugs" / "pool"
DEFAULT_MIRRORS = Path("/work/.mirror")

pool_app = typer.Typer(help="The pool of real bugs no rule was tuned on.", no_args_is_help=True)


@dataclass(frozen=True, slots=True)
class ProjectCount:
    project: str
    tried: int
    built: int
    skipped: int
    with_issue: int


def project_of(case_id: str) -> str:
    """``luigi-12`` → ``luigi``; a SWE-bench id ``sympy__sympy-12345`` → ``sympy``."""
    head = case_id.rsplit("-", 1)[0]
    return head.split("__", 1)[0]


def count_by_project(builds: Sequence[PoolBuild]) -> list[ProjectCount]:
    out: dict[str, list[PoolBuild]] = {}
    for b in builds:
        out.setdefault(project_of(b.case_id), []).append(b)
    return [
        ProjectCount(
            p,
            len(bs),
            sum(1 for b in bs if b.built),
            sum(1 for b in bs if not b.built),
            sum(1 for b in bs if b.built and b.has_issue),
        )
        for p, bs in sorted(out.items())
    ]


def _line(b: PoolBuild) -> str:
    if b.built:
        return f"{terminal(b.case_id):<16} built{' (with issue text)' if b.has_issue else ''}"
    return f"{terminal(b.case_id):<16} skipped: {terminal(b.skipped or '')}"


@pool_app.command("build")
def build_command(
    out: Annotated[Path, typer.Option(help="The pool folder.")] = DEFAULT_OUT,
    mirrors: Annotated[
        Path, typer.Option(help="The public mirrors (owner+name/repo bare repositories).")
    ] = DEFAULT_MIRRORS,
    only: Annotated[
        str | None, typer.Option(help="Comma-separated case ids to build (default: all).")
    ] = None,
    project: Annotated[
        list[str] | None,
        typer.Option(help=f"Only this project (default: all: {', '.join((*PROJECTS, 'sympy'))})."),
    ] = None,
    issues: Annotated[
        Path | None,
        typer.Option(help="The users' issue texts, <case-id>.md (default: eval/pool/issues)."),
    ] = None,
) -> None:
    """Build the pool's cases from public mirrors: verified, or skipped with the reason."""
    if not mirrors.is_dir():
        raise InputError(f"--mirrors {mirrors}: not a folder of mirrors")
    if issues is not None and not issues.is_dir():
        raise InputError(f"--issues {issues}: not a folder of <case-id>.md issue texts")
    ids = {i.strip() for i in (only or "").split(",") if i.strip()}
    projects = tuple(project or ())
    console = Console(emoji=False, highlight=False, soft_wrap=True)

    def show(b: PoolBuild) -> None:
        console.print(_line(b))

    builds: list[PoolBuild] = []
    for _name, source in SOURCES:
        builds += source(out, mirrors, only=ids, projects=projects, issues=issues, on_case=show)
    counts = count_by_project(builds)
    for p in sorted(set(projects) - {c.project for c in counts}):
        console.print(f"--project {terminal(p)}: no source has cases of it")
    table = Table(title=f"Pool at {terminal(str(out))}")
    for col in ("project", "tried", "built", "skipped", "with issue text"):
        table.add_column(col)
    for c in counts:
        table.add_row(c.project, str(c.tried), str(c.built), str(c.skipped), str(c.with_issue))
    console.print(table)
