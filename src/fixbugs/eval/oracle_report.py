"""The oracle eval's summary: each case's gold fix expressible or not, and validated or not.

Computed after the agent is done (it reads the gold, like the scorer), by
the rule of :func:`fixbugs.eval.gold_edits.expressible`, so the share of
validated fixes is over the cases whose gold fix the engine can express,
each with the reason it counts or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rich.console import Console
from rich.table import Table

from fixbugs.eval.case import Case
from fixbugs.eval.gold_edits import expressible, load_gold_fix
from fixbugs.eval.oracle import OracleNoise
from fixbugs.inputs.inert import terminal

__all__ = ["OracleCase", "OracleSummary", "oracle_summary", "print_oracle_summary"]


class Scored(Protocol):
    """What the summary reads of a case's result (:class:`fixbugs.eval.run.CaseResult`)."""

    @property
    def id(self) -> str: ...
    @property
    def validated(self) -> bool: ...
    @property
    def notes(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class OracleCase:
    id: str
    expressible: bool
    why: str
    one_function: bool  # every gold change inside one function of one file
    validated: bool  # the eval's own check of the run's patch, in a fresh extraction
    oracle_note: str  # the form the oracle wrote and what it answered


@dataclass(frozen=True, slots=True)
class OracleSummary:
    noise: OracleNoise | None
    cases: tuple[OracleCase, ...]
    expressible: int
    validated_expressible: int
    one_function: int
    validated_one_function: int


def oracle_summary(
    cases: Sequence[Case], results: Sequence[Scored], noise: OracleNoise | None
) -> OracleSummary:
    by_id = {c.id: c for c in cases}
    rows = []
    for r in results:
        e = expressible(load_gold_fix(by_id[r.id].dir))
        note = next((n for n in reversed(r.notes) if n.startswith("oracle: ")), "")
        rows.append(OracleCase(r.id, e.ok, e.why, e.one_function, r.validated, note))
    return OracleSummary(
        noise,
        tuple(rows),
        sum(c.expressible for c in rows),
        sum(c.expressible and c.validated for c in rows),
        sum(c.one_function for c in rows),
        sum(c.one_function and c.validated for c in rows),
    )


def print_oracle_summary(s: OracleSummary, console: Console) -> None:
    mode = (
        f"noisy (wrong {s.noise.wrong:.0%}, malformed {s.noise.malformed:.0%}, "
        f"TTFT {s.noise.ttft_s:g} s)"
        if s.noise
        else "clean"
    )
    table = Table(title=f"Oracle ({mode}): gold fixes the engine can express, and validated fixes")
    for col in ("case", "expressible", "why", "validated", "oracle"):
        table.add_column(col)
    for c in s.cases:
        table.add_row(
            terminal(c.id),
            "yes" if c.expressible else "no",
            c.why,
            "yes" if c.validated else "no",
            terminal(c.oracle_note.removeprefix("oracle: ")),
        )
    console.print(table)
    console.print(
        f"validated fixes: {s.validated_expressible}/{s.expressible} of the expressible cases; "
        f"{s.validated_one_function}/{s.one_function} of those inside one function",
        highlight=False,
    )
