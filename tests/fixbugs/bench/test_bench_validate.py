"""``fixbugs bench validate``: the same candidates on the tests alone, then with the checks.

The validation stage on a fake workspace whose every test command takes one
second of an injected clock: the two passes' walls are then counts of
commands, so the test sees exactly what the checks add (the search going on
past a pass that fails a check, the package's tests on the lead) without
timing anything real.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from agentrt import FakeClock
from fixbugs.bench.validate import CaseChecks, checks_total
from fixbugs.diffs import make_diff
from fixbugs.inputs.repo import Repository
from fixbugs.repair.ranking import RepairCandidate
from fixbugs.repair.verdict import VerdictLevel
from fixbugs.run.context import AgentOptions, RunContext
from fixbugs.run.progress import Journal
from fixbugs.run.record import BugRun, Diagnosis, Reproduction, RootCause
from fixbugs.sandbox.limits import CommandResult
from fixbugs.stages.validate import validate_candidates

SRC = (
    "def allowed(user):\n"
    "    if user.admin:\n"
    "        return True\n"
    "    return user.name in OWNERS\n"
)  # fmt: skip
TEST = "from m import allowed\n\n\ndef test_allowed():\n    assert allowed(U)\n"
COMMAND = "python -m pytest -v -p no:cacheprovider tests/test_m.py::test_allowed"
BEFORE = {"tests/test_m.py::test_allowed": "FAILED"}


@dataclass
class TimedWorkspace:
    """Forks where every command takes one second; the tests pass where a passing diff applied."""

    clock: FakeClock
    passing: set[str]
    diff: str | None = None
    ran: list[tuple[str | None, str]] = field(default_factory=list)
    baseline: None = None

    def fork(self) -> TimedWorkspace:
        return TimedWorkspace(self.clock, self.passing, None, self.ran)

    def apply_patch(self, diff: str) -> SimpleNamespace:
        self.diff = diff
        return SimpleNamespace(applied=True, message="applied")

    async def run(self, cmd: str, *, timeout_s: float = 60, env: object = None) -> CommandResult:
        self.ran.append((self.diff, cmd))
        self.clock.advance(1.0)
        ok = self.diff in self.passing
        out = f"tests/test_m.py::test_allowed {'PASSED' if ok else 'FAILED'}\n"
        out += f"==== {'1 passed' if ok else '1 failed'} in 0.01s ====\n"
        return CommandResult((cmd,), 0 if ok else 1, out, "", False, None, 0.01, False)

    def close(self) -> None:
        pass


async def test_the_checked_pass_goes_past_a_demoted_fix_and_costs_what_it_ran(tmp_path: Path):
    repo = tmp_path / "proj"
    (repo / "tests").mkdir(parents=True)
    (repo / "m.py").write_text(SRC)
    (repo / "tests" / "test_m.py").write_text(TEST)
    clock = FakeClock()
    ctx = RunContext.create(
        Repository(repo, is_git=False),
        models=None,
        options=AgentOptions(validation_slots=1, checks_bench=True),
        journal=Journal(clock, lambda e: None),
    )
    prior = BugRun(
        started=0.0,
        reproduction=Reproduction(
            COMMAND, "given", "confirmed", "fails", BEFORE, verbose_command=COMMAND
        ),
        diagnosis=Diagnosis(root_cause=RootCause("m.py", 1, 4, "admins only", "static")),
    )
    # ranked first: the condition's operand swapped for another attribute (a demoting
    # shape only the checks see); second: a change inside the condition's own test
    swap = SRC.replace("if user.admin:", "if user.staff:")
    real = SRC.replace("user.name in OWNERS", "user.name.lower() in OWNERS")
    cands = [
        RepairCandidate.from_diff(0, make_diff("m.py", SRC, swap), "test", "staff"),
        RepairCandidate.from_diff(1, make_diff("m.py", SRC, real), "test", "lower"),
    ]
    box = TimedWorkspace(clock, {c.diff for c in cands})
    v = await validate_candidates(prior, ctx, box, cands)  # type: ignore[arg-type]
    assert v.level == VerdictLevel.VALIDATED and v.candidate is not None
    assert v.candidate.id == 1
    assert v.repair is not None and v.repair.checks_bench is not None
    bench = v.repair.checks_bench
    # each candidate runs two stages (its failing test, then its module's tests): the
    # tests alone stop at the first pass, the operand swap, after two commands
    assert bench.tests_only_fix == cands[0].diff and bench.tests_only_candidates_run == 1
    assert bench.tests_only_s == 2.0
    # the checks judge it, go on to the second pass, which leads (four commands), then
    # run the behavioural diff's probe on the lead, the buggy tree and the patched one
    # (two more; this fake prints no record, so the probe says nothing)
    assert bench.with_checks_fix == cands[1].diff and bench.with_checks_verdict == "validated"
    assert bench.with_checks_candidates_run == 2 and bench.with_checks_s == 6.0
    assert bench.ratio == 3.0 and bench.same_fix is False
    swap_d, real_d = cands[0].diff, cands[1].diff
    tests_only = [swap_d, swap_d]
    checked = [swap_d, swap_d, real_d, real_d]
    assert [d for d, _ in box.ran[:6]] == tests_only + checked
    probes = sorted((d or "", c.split(" ", 2)[1]) for d, c in box.ran[6:])
    assert probes == [("", "-c"), (real_d, "-c")]


def test_the_total_is_the_summed_walls_over_the_cases_that_reached_validation() -> None:
    def row(id: str, plain: float, checked: float, note: str = "") -> CaseChecks:
        return CaseChecks(id, plain, checked, None, "validated", True, None, None, note)

    rows = [row("a", 10.0, 12.0), row("b", 30.0, 33.0), row("c", 0.0, 0.0, "not reproduced")]
    assert checks_total(rows) == 1.12
    assert checks_total([rows[2]]) is None


def test_a_case_id_not_under_the_folder_is_a_one_line_error(tmp_path: Path) -> None:
    case = tmp_path / "cases" / "c-1"
    case.mkdir(parents=True)
    (case / "case.json").write_text('{"id": "c-1", "test_command": "pytest"}')
    (case / "report.md").write_text("it fails")
    argv = ["bench", "validate", "--cases", str(tmp_path / "cases"), "--case", "c-2"]
    res = subprocess.run(
        [sys.executable, "-c", "from fixbugs.cli import main; main()", *argv],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 2, res.stderr
    assert "--case c-2: no such case folder" in res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1
