"""The evaluation's data: a case as the agent may see it, and what an agent returns.

Apart from :mod:`fixbugs.eval.run` so that agent runners
(:mod:`fixbugs.eval.full_agent`) depend on these types, not on the eval driver
that imports them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from fixbugs.localize import RankedFile
from fixbugs.repair.verdict import VerdictLevel

__all__ = ["AgentOutput", "AgentRunner", "Case", "ReproductionKind"]

ReproductionKind = Literal["genuine", "environment", "none"]


@dataclass(frozen=True, slots=True)
class Case:
    """What the agent may see of a case: never its gold answer."""

    id: str
    dir: Path
    report: str
    test_command: str
    python: str
    requirements: tuple[str, ...]
    report_file: Path | None = None  # the report's file when not dir/report.md (--reports)
    archive: str = "repo.tar.gz"  # the tree the agent gets (a pool's issue mode: repo-issue)


@dataclass(frozen=True, slots=True)
class AgentOutput:
    ranked: tuple[RankedFile, ...]
    patch: str | None = None
    reproduction_confirmed: bool | None = None
    stage_s: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    root_cause: tuple[str, int, int] | None = None  # path, first line, last line
    degraded: bool = False
    # SBFL gave evidence: the bug was reproduced and its coverage run scored lines
    sbfl_ran: bool = False
    # each stage's time to its first streamed token (stages that streamed a model call)
    stage_ttft_s: dict[str, float] = field(default_factory=dict)
    # the run's verdict on ``patch``: only ``validated`` counts as a validated fix
    verdict: VerdictLevel = VerdictLevel.NO_FIX
    # genuine, environment (could not run, or failed for the machine's sake) or none
    reproduction_kind: ReproductionKind = "none"

    @property
    def agent_validated(self) -> bool:
        """The run's own verdict was ``validated`` (the scorer checks the fix again)."""
        return self.verdict is VerdictLevel.VALIDATED


AgentRunner = Callable[[Case, Path, Path], Awaitable[AgentOutput]]
