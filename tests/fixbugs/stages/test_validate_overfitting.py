"""A fix that swallows the error is not a validated fix (issue 23, item 5; issue 44).

The validation stage on a fake workspace (no root, no test process): each
fork answers the test commands as if the candidate applied there made the
tests pass or not. A candidate that only catches and discards the failing
exception, negates a whole condition or returns a constant may pass every
stage; it never ends the search, never leads a clean fix, and when nothing
else passes the verdict is "passes tests", with its failed check, never
"validated".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from agentrt import FakeClock
from fixbugs.diffs import make_diff
from fixbugs.inputs.repo import Repository
from fixbugs.queued.state import decode, encode
from fixbugs.repair.ranking import RepairCandidate, rank, to_candidate
from fixbugs.repair.render import OVERFITTING_HEADING
from fixbugs.repair.source import SourceFile
from fixbugs.repair.statements import try_edits
from fixbugs.repair.verdict import VerdictLevel
from fixbugs.run.context import AgentOptions, RunContext
from fixbugs.run.progress import Journal, ProgressEvent, ValidatedData
from fixbugs.run.record import BugRun, Diagnosis, Reproduction, RootCause, Validation
from fixbugs.run.report import build_report
from fixbugs.sandbox.limits import CommandResult
from fixbugs.stages.validate import validate_candidates

SRC = (
    "def label(d, key):\n"
    "    value = d[key]\n"
    "    return value.strip()\n"
    "\n\n"
    "def allowed(user):\n"
    "    if user.admin:\n"
    "        return True\n"
    "    return user.name in OWNERS\n"
)  # fmt: skip
TEST = (
    "from m import label\n\n\n"
    "def test_label():\n    assert label({}, 'k') == ''\n\n\n"
    "def test_other():\n    assert label({'k': ' v '}, 'k') == 'v'\n"
)
COMMAND = "python -m pytest -v -p no:cacheprovider tests/test_m.py::test_label"
BEFORE = {"tests/test_m.py::test_label": "FAILED", "tests/test_m.py::test_other": "PASSED"}


def _pytest_output(outcomes: dict[str, str]) -> str:
    lines = [f"{t} {o}" for t, o in outcomes.items()]
    failed = sum(o == "FAILED" for o in outcomes.values())
    passed = len(outcomes) - failed
    tail = ", ".join(x for x in (f"{failed} failed" * bool(failed), f"{passed} passed") if x)
    return "\n".join([*lines, f"==== {tail} in 0.01s ===="]) + "\n"


@dataclass
class FakeWorkspace:
    """Forks that answer the test commands: every test passes where a ``passing`` diff applied."""

    passing: set[str]
    diff: str | None = None
    ran: list[tuple[str | None, str]] = field(default_factory=list)
    baseline: None = None  # no pristine tree on disk: sources come from the listing

    def fork(self) -> FakeWorkspace:
        return FakeWorkspace(self.passing, None, self.ran)

    def apply_patch(self, diff: str) -> SimpleNamespace:
        self.diff = diff
        return SimpleNamespace(applied=True, message="applied")

    async def run(self, cmd: str, *, timeout_s: float = 60, env: object = None) -> CommandResult:
        self.ran.append((self.diff, cmd))
        fixed = self.diff in self.passing
        outcomes = {
            t: ("PASSED" if fixed else o)
            for t, o in BEFORE.items()
            if "::" not in cmd or cmd.endswith(t.rsplit("::", 1)[1])
        }
        code = 0 if all(o == "PASSED" for o in outcomes.values()) else 1
        return CommandResult((cmd,), code, _pytest_output(outcomes), "", False, None, 0.01, False)

    def close(self) -> None:
        pass


def _setup(tmp_path: Path) -> tuple[BugRun, RunContext, list[ProgressEvent]]:
    repo = tmp_path / "proj"
    (repo / "tests").mkdir(parents=True)
    (repo / "m.py").write_text(SRC)
    (repo / "tests" / "test_m.py").write_text(TEST)
    events: list[ProgressEvent] = []
    ctx = RunContext.create(
        Repository(repo, is_git=False),
        models=None,
        options=AgentOptions(validation_slots=1),  # one at a time: the order is the rank's
        journal=Journal(FakeClock(), events.append),
    )
    prior = BugRun(
        started=0.0,
        reproduction=Reproduction(
            COMMAND, "given", "confirmed", "fails", BEFORE, verbose_command=COMMAND
        ),
        diagnosis=Diagnosis(root_cause=RootCause("m.py", 1, 9, "the lookup fails", "static")),
    )
    return prior, ctx, events


def _swallowing_candidate() -> RepairCandidate:
    """The engine's own ``try/except KeyError: return None`` (the old code ranked it low risk)."""
    src = SourceFile("m.py", SRC)
    edit = next(e for e in try_edits(src, src.statements_touching(2, 2), ("KeyError",))
                if e.why.endswith("return None"))  # fmt: skip
    return to_candidate(0, edit, SRC, 1.0, frozenset())


def _real_fix(id: int) -> RepairCandidate:
    diff = make_diff("m.py", SRC, SRC.replace("d[key]", "d.get(key, '')"))
    return RepairCandidate.from_diff(id, diff, "test", "look the key up with a default")


def _model_swallow(id: int) -> RepairCandidate:
    """A model's rewrite that wraps the lookup and discards the error (a diff it wrote)."""
    new = SRC.replace(
        "    value = d[key]\n",
        "    try:\n        value = d[key]\n    except Exception:\n        pass\n",
    )
    diff = make_diff("m.py", SRC, new)
    return RepairCandidate(id, "m.py", diff, new, "model", "model rewrite of 2-2", 2, 2,
                           1.0, 0.9, 1.0, 4, "low", own=False)  # fmt: skip


async def test_a_swallowing_fix_that_validates_first_does_not_end_the_search(tmp_path: Path):
    prior, ctx, events = _setup(tmp_path)
    swallow, model, real = _swallowing_candidate(), _model_swallow(1), _real_fix(2)
    box = FakeWorkspace({swallow.diff, model.diff, real.diff})
    # both swallowing candidates come first, as a score-only ranking would put them
    v = await validate_candidates(prior, ctx, box, [swallow, model, real])  # type: ignore[arg-type]
    assert v.validated and v.candidate is not None and v.candidate.id == real.id
    assert v.summary.startswith("validated fix (test)")
    assert "2 more pass the tests but fail a check" in v.summary
    assert {c.id for c in v.overfitting} == {swallow.id, model.id}
    assert {c.shape.kind for c in v.overfitting if c.shape} == {"swallows"}
    # every candidate ran: the swallowing ones did not stop the search
    assert {d for d, _ in box.ran} >= {swallow.diff, model.diff, real.diff}
    assert v.repair is not None
    assert [f.id for f in v.repair.validated] == [real.id]
    assert {f.id for f in v.repair.overfitting} == {swallow.id, model.id}
    assert all(f.validated is False for f in v.repair.overfitting)
    # a person watching sees them as candidates, never as "validated"
    validated = [e.data for e in events if e.kind == "validated"]
    assert validated == [ValidatedData(real.diff, real.overfit_risk)]
    assert any("is not validated" in e.message for e in events if e.kind == "candidate")
    # the report: the real fix is the patch, the others come below it, in their own section
    md = _report(prior, v)
    assert md.index("**validated**") < md.index(OVERFITTING_HEADING)


async def test_only_a_swallowing_fix_validates_means_it_only_passes_tests(tmp_path: Path):
    prior, ctx, _ = _setup(tmp_path)
    swallow, real = _swallowing_candidate(), _real_fix(1)
    box = FakeWorkspace({swallow.diff})  # the real-looking fix fails the tests here
    v = await validate_candidates(prior, ctx, box, [swallow, real])  # type: ignore[arg-type]
    assert not v.validated and v.level == VerdictLevel.PASSES_TESTS
    assert v.candidate is not None and v.candidate.id == swallow.id
    assert v.summary.startswith("passes tests, not validated")
    assert "swallows the exception" in v.summary
    assert [c.kind for c in v.failed] == ["swallows"] and v.overfitting == ()
    assert v.repair is not None and v.repair.first_validated_s is None  # no fix was found
    run = prior.model_copy(update={"validation": v})
    report = build_report(run, title="label fails", environment=None, total_s=1.0)
    d = report.to_dict()
    assert d["validated"] is False and d["verdict"] == "passes_tests"
    assert d["patch"] == swallow.diff
    assert [c["kind"] for c in d["validation"]["failed_checks"]] == ["swallows"]
    (item,) = v.repair.overfitting
    assert item.id == swallow.id and item.shape == "swallows" and item.diff == swallow.diff
    md = report.markdown()
    assert "**Passes tests, not validated** — passes tests, not validated" in md
    assert "- it swallows the exception: wraps existing code" in md
    assert f"### {OVERFITTING_HEADING}" in md and "**validated**" not in md
    assert md.index("## Repair") < md.index(OVERFITTING_HEADING) < md.index("## Root cause")
    # the record keeps them, and comes back from the queue's JSON equal
    assert decode(json.loads(json.dumps(encode(run)))) == run


async def test_a_negated_condition_or_a_constant_return_never_leads(tmp_path: Path):
    prior, ctx, _ = _setup(tmp_path)
    negate = SRC.replace("if user.admin:", "if not user.admin:")
    constant = SRC.replace("return user.name in OWNERS", "return False")
    # a real fix, ranked last (``user.admin`` -> ``user.is_admin`` would swap the operand)
    admin_only = SRC.replace("user.name in OWNERS", "user.name.lower() in OWNERS")
    cands = [
        RepairCandidate.from_diff(0, make_diff("m.py", SRC, negate), "model", "negated"),
        RepairCandidate.from_diff(1, make_diff("m.py", SRC, constant), "model", "return False"),
        RepairCandidate.from_diff(2, make_diff("m.py", SRC, admin_only), "model", "is_admin"),
    ]
    v = await validate_candidates(prior, ctx, FakeWorkspace({c.diff for c in cands[:2]}), cands)  # type: ignore[arg-type]
    assert not v.validated and v.level == VerdictLevel.PASSES_TESTS and v.candidate is not None
    shapes = {c.id: c.shape.kind for c in (v.candidate, *v.overfitting) if c.shape}
    assert shapes == {0: "negates_condition", 1: "returns_constant"}
    assert "negates a whole condition" in v.summary or "returns a constant" in v.summary
    # the same two, and the real fix passing too: it leads, though ranked after them
    v = await validate_candidates(prior, ctx, FakeWorkspace({c.diff for c in cands}), cands)  # type: ignore[arg-type]
    assert v.validated and v.candidate is not None and v.candidate.id == 2
    assert len(v.overfitting) == 2


def test_ranking_puts_a_swallowing_candidate_after_a_real_one() -> None:
    swallow = _swallowing_candidate()
    real = to_candidate(
        1,
        SourceFile("m.py", SRC).replace_lines(2, 2, "    value = d.get(key, '')\n", "x", "get")
        or _never(),
        SRC,
        0.1,
        frozenset(),
    )
    assert [c.id for c in rank([swallow, real])] == [1, 0]


def _never() -> object:
    raise AssertionError("the edit did not apply")


def _report(prior: BugRun, v: Validation) -> str:
    run = prior.model_copy(update={"validation": v})
    return build_report(run, title="t", environment=None, total_s=1.0).markdown()
