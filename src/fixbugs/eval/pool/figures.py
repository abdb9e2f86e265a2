"""The pool's one table: each figure per mode, beside BM25 and beside the previous run.

:func:`pool_report` counts the rows of :mod:`.evaluate` into
:class:`PoolReport` (typed, what ``--json`` writes and the next run reads
back as its previous); :func:`print_report` shows it. A case-mode whose
top-1, region, reproduction, validation or acceptance moved since the
previous run is listed by name, so a figure that moved says which cases
moved it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import TypeAdapter
from rich.console import Console
from rich.table import Table

from fixbugs.errors import InputError
from fixbugs.eval.pool.evaluate import Mode, PoolRow
from fixbugs.inputs.inert import terminal

__all__ = ["Change", "Figure", "ModeFigures", "PoolReport", "load_report", "pool_report"]

MODES: tuple[Mode, ...] = ("test", "issue")
MODE_TITLE = {"test": "with the failing test given", "issue": "from the issue alone"}


@dataclass(frozen=True, slots=True)
class Figure:
    """How many case-modes hold ``name``: the agent's, BM25's (localization only) and the
    previous run's count."""

    name: str
    agent: int
    bm25: int | None = None
    previous: int | None = None


@dataclass(frozen=True, slots=True)
class ModeFigures:
    mode: Mode
    cases: int
    figures: tuple[Figure, ...]
    previous_cases: int | None = None


@dataclass(frozen=True, slots=True)
class Change:
    case_id: str
    mode: Mode
    what: str  # "accepted False → True; top-1 True → False"


@dataclass(frozen=True, slots=True)
class PoolReport:
    pool: str
    table: tuple[ModeFigures, ...]
    rows: tuple[PoolRow, ...]
    changed: tuple[Change, ...] = ()
    previous: str | None = None  # the file the previous figures came from
    settings: dict[str, str] = field(default_factory=dict)  # repair budget, jobs, model


_REPORT = TypeAdapter(PoolReport)


def load_report(path: Path) -> PoolReport:
    try:
        return _REPORT.validate_json(path.read_bytes())
    except (OSError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"--previous {path}: not a pool run's JSON ({first})") from None


def dump_report(report: PoolReport) -> bytes:
    return _REPORT.dump_json(report, indent=2)


def _counts(rows: Sequence[PoolRow]) -> list[tuple[str, int, int | None]]:
    def n(pred: Callable[[PoolRow], bool]) -> int:
        return sum(1 for r in rows if pred(r))

    return [
        ("file top-1", n(lambda r: r.top1), n(lambda r: r.bm25_top1)),
        ("file top-3", n(lambda r: r.top3), n(lambda r: r.bm25_top3)),
        ("file top-5", n(lambda r: r.top5), n(lambda r: r.bm25_top5)),
        ("region", n(lambda r: r.region), None),
        ("reproduction: genuine", n(lambda r: r.reproduction == "genuine"), None),
        ("reproduction: environment", n(lambda r: r.reproduction == "environment"), None),
        ("reproduction: none", n(lambda r: r.reproduction == "none"), None),
        ("validated (the run's own verdict)", n(lambda r: r.validated), None),
        ("accepted by the real tests (any verdict)", n(lambda r: r.accepted), None),
        ("validated and accepted by the real tests", n(lambda r: r.validated and r.accepted), None),
        (
            "validated, rejected by the real tests",
            n(lambda r: r.validated and not r.accepted),
            None,
        ),
    ]


def _rejected(r: PoolRow) -> bool:
    return r.validated and not r.accepted


def _diff(old: PoolRow, new: PoolRow) -> str:
    said = []
    for name, a, b in (
        ("top-1", old.top1, new.top1),
        ("region", old.region, new.region),
        ("reproduction", old.reproduction, new.reproduction),
        ("validated", old.validated, new.validated),
        ("accepted", old.accepted, new.accepted),
    ):
        if a != b:
            said.append(f"{name} {a} → {b}")
    return "; ".join(said)


def pool_report(
    pool: Path,
    rows: Sequence[PoolRow],
    previous: PoolReport | None = None,
    previous_file: Path | None = None,
    settings: dict[str, str] | None = None,
) -> PoolReport:
    """The table of ``rows``, each figure beside the previous run's, and what changed."""
    rows = sorted(rows, key=lambda r: (r.case_id, r.mode))
    before = (
        {(f.mode, g.name): g.agent for f in previous.table for g in f.figures} if previous else {}
    )
    before_n = {f.mode: f.cases for f in previous.table} if previous else {}
    table = []
    for mode in MODES:
        mine = [r for r in rows if r.mode == mode]
        if not mine and mode not in before_n:
            continue
        table.append(
            ModeFigures(
                mode,
                len(mine),
                tuple(Figure(k, a, b, before.get((mode, k))) for k, a, b in _counts(mine)),
                before_n.get(mode),
            )
        )
    old = {(r.case_id, r.mode): r for r in previous.rows} if previous else {}
    changed = tuple(
        Change(r.case_id, r.mode, what)
        for r in rows
        if (o := old.get((r.case_id, r.mode))) is not None and (what := _diff(o, r))
    )
    return PoolReport(
        str(pool),
        tuple(table),
        tuple(rows),
        changed,
        str(previous_file) if previous_file else None,
        dict(settings or {}),
    )


def _share(k: int | None, n: int | None) -> str:
    if k is None or not n:
        return "-"
    return f"{k}/{n} ({k / n:.0%})"


def print_report(report: PoolReport, console: Console) -> None:
    for m in report.table:
        t = Table(title=f"Pool, {MODE_TITLE[m.mode]}: {m.cases} cases")
        for col in ("figure", "agent", "BM25", "previous run"):
            t.add_column(col)
        for f in m.figures:
            t.add_row(
                f.name,
                _share(f.agent, m.cases),
                _share(f.bm25, m.cases),
                _share(f.previous, m.previous_cases),
            )
        console.print(t)
    if report.previous:
        console.print(f"previous run: {terminal(report.previous)}", highlight=False)
    for c in report.changed:
        console.print(f"changed: {terminal(c.case_id)} ({c.mode}): {c.what}", highlight=False)
