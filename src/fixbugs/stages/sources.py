"""The bug's sources as the user gave them, and what the failing tests pin down.

The fix stage reads the code it rewrites here, and the validation stage the
failing tests' constants (the special-case check) and the stepwise
follow-ups; both ask :func:`can_validate` whether a candidate can be checked
at all. A shared part of the stages: it imports no stage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypeGuard

from fixbugs.pyenv.testrun import parse_test_command
from fixbugs.repair import RepairCandidate, test_literals
from fixbugs.repair.followup import Stepwise
from fixbugs.repair.hints import test_numbers
from fixbugs.run.context import RunContext
from fixbugs.run.record import BugRun, Reproduction
from fixbugs.sandbox.reported import read_baseline_text

__all__ = ["Sources", "can_validate", "stepwise_refiner", "test_constants", "test_sources"]


def can_validate(repro: Reproduction | None) -> TypeGuard[Reproduction]:
    """Whether validation can check a candidate: the bug's failure was seen, by a command.

    Validation reruns that command on every candidate
    (:func:`fixbugs.stages.validate.validate_candidates` refuses to run
    without it), whichever way the reproduction was found.
    """
    return repro is not None and repro.confirmed and repro.command is not None


class Sources:
    """Files as the user gave them: the workspace's pristine baseline, else the input tree.

    A path may come from a test run (coverage, a test id in pytest's output)
    or from the report: only a file of the repository's listing is read, and
    from the baseline by its relative path, following no link.
    """

    def __init__(self, files: Mapping[str, str], baseline: Path | None) -> None:
        self.files = files
        self.baseline = baseline

    def text(self, path: str) -> str | None:
        if path not in self.files:
            return None
        base = self.baseline
        text = read_baseline_text(base, path) if base is not None else None
        return self.files[path] if text is None else text


def test_sources(prior: BugRun, sources: Sources) -> list[str]:
    repro = prior.reproduction
    if repro is None or repro.command is None:
        return []
    out = []
    for f in parse_test_command(repro.command).files:
        text = sources.text(f)
        if text is not None:
            out.append(text)
    return out


def test_constants(
    prior: BugRun, files: Mapping[str, str], baseline: Path | None
) -> frozenset[str]:
    """The failing tests' strings (:func:`test_literals`) and numbers (by ``repr``), for the
    special-case check of a passing fix (:mod:`fixbugs.repair.demotions`)."""
    srcs = test_sources(prior, Sources(files, baseline))
    return test_literals(srcs) | test_numbers(srcs)


def stepwise_refiner(
    prior: BugRun, ctx: RunContext, candidates: Sequence[RepairCandidate], baseline: Path | None
) -> Stepwise | None:
    """Follow-ups for validation (:mod:`fixbugs.repair.followup`): the next edit built on a
    candidate whose failing tests fail further on; None without a reproduction to compare."""
    repro = prior.reproduction
    if not can_validate(repro) or not ctx.options.stepwise:
        return None
    files = ctx.files()
    sources = Sources(files, baseline)
    return Stepwise(
        sources.text,
        repro.failure_text + "\n" + repro.output_tail,
        listed=files.keys(),
        first_id=max((c.id for c in candidates), default=-1) + 1,
        test_literals=test_literals(test_sources(prior, sources)),
    )
