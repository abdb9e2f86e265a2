"""What "validated" means: a verdict level, and each check a passing fix failed.

Passing the failing tests and the project's other tests is not enough
(issue 44): held-out bugs had "validated" fixes that swapped a condition's
operand for another attribute, narrowed a condition so its branch no longer
ran, or returned early past a flag the real fix still sets. So a fix has a
:class:`VerdictLevel`:

- ``validated``: every test gate passed and every check holds;
- ``passes_tests``: the reproduction and the project's tests pass, but a
  check does not hold (a demoting shape of the change,
  :mod:`fixbugs.repair.demotions` and :mod:`fixbugs.repair.shapes`; no test
  of the project exercises the changed module; its package's tests could not
  be run; the reproduction is the report's own code and the report does
  not say what it should print, so the gate can only see the failure gone):
  each one a :class:`FailedCheck` with its one-line why;
- ``no_fix``: no candidate passed the tests.

Only ``validated`` is printed as validated, counted by ``fixbugs eval`` as a
validated fix, or applied by ``fixbugs run --apply`` without ``--force``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from fixbugs.repair.shapes import ChangeShape

__all__ = ["CHECK_LABELS", "CheckKind", "FailedCheck", "VerdictLevel", "shape_check"]


class VerdictLevel(StrEnum):
    """How far a run's fix is proven (its JSON value is the member's value)."""

    VALIDATED = "validated"
    PASSES_TESTS = "passes_tests"
    NO_FIX = "no_fix"

    @property
    def label(self) -> str:
        """How a person reads it: "validated", "passes tests", "no fix"."""
        return self.value.replace("_", " ")


CheckKind = Literal[
    # the shapes of fixbugs.repair.shapes: the change only hides the failure
    "swallows",
    "negates_condition",
    "returns_constant",
    # fixbugs.repair.demotions
    "bare_except",
    "special_case",
    "deletes_check",
    "replaces_operand",
    "changes_condition",
    "skips_effects",
    # what the project's tests say of the change
    "untested",
    "package_tests",
    # fixbugs.repair.behaviour: the changed functions answer the passing tests differently
    "changes_behaviour",
    # what the reproduction can tell of a fix (fixbugs.stages.lead.oracle_check)
    "weak_oracle",
]

CHECK_LABELS: dict[CheckKind, str] = {
    "swallows": "swallows the exception",
    "negates_condition": "negates a whole condition",
    "returns_constant": "returns a constant",
    "bare_except": "adds a bare except",
    "special_case": "special-cases a literal of the failing test",
    "deletes_check": "deletes a check",
    "replaces_operand": "replaces a condition's operand",
    "changes_condition": "widens or narrows a condition",
    "skips_effects": "returns early past the function's effects",
    "untested": "no test of the project exercises the change",
    "package_tests": "the package's tests gave no verdict",
    "weak_oracle": "is checked only for the failure being gone",
    "changes_behaviour": "changes what the code does on tests that passed",
}


@dataclass(frozen=True, slots=True)
class FailedCheck:
    """One check a passing fix does not meet: which, and why, in one line."""

    kind: CheckKind
    why: str

    @property
    def label(self) -> str:
        return CHECK_LABELS[self.kind]

    def line(self) -> str:
        """The report's line: what failed, then where and how."""
        return f"{self.label}: {self.why}"


def shape_check(shape: ChangeShape) -> FailedCheck:
    """A change shape of :mod:`fixbugs.repair.shapes` as a failed check."""
    return FailedCheck(shape.kind, shape.reason)
