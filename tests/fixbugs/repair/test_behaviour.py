"""The behavioural diff (issue 44, item 3): a passing fix that changes what the code does
on tests that passed is not validated.

The gate runs for real here, in :class:`~fixbugs.sandbox.testing.PlainWorkspace`
forks of a small repository whose rule checks the wrong string: the real fix
changes nothing a passing test sees; a wrong fix that also passes every test
makes the rule fire on a command the smoke test gives, and the gate names it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from userpython import user_python

from agentrt import FakeClock
from fixbugs.diffs import make_diff
from fixbugs.inputs.repo import Repository
from fixbugs.repair.behaviour import (
    MARK,
    BehaviourChange,
    Records,
    behaviour_changes,
    behaviour_check,
    changed_functions,
    read_records,
    unstable_tests,
)
from fixbugs.repair.ranking import RepairCandidate
from fixbugs.repair.verdict import VerdictLevel
from fixbugs.run.context import AgentOptions, RunContext
from fixbugs.run.progress import Journal
from fixbugs.run.record import BugRun, Diagnosis, Reproduction, RootCause
from fixbugs.sandbox.executor import Workspace
from fixbugs.sandbox.limits import CommandResult
from fixbugs.sandbox.testing import PlainWorkspace
from fixbugs.stages.lead import behaviour_gate
from fixbugs.stages.validate import validate_candidates

SRC = (
    "def match(script, output):\n"
    "    return 'push' in script.split() and 'set-upstream' in script\n"
    "\n\n"
    "def unchanged(x):\n"
    "    return x\n"
)  # fmt: skip
TESTS = (
    "from m import match\n\n\n"
    "def test_match():\n"
    "    assert match('git push', 'fatal: use git push --set-upstream origin')\n\n\n"
    "def test_smoke():\n"
    "    match('git status', 'hint: git push --set-upstream')\n"
)
FAILING = ["tests/test_m.py::test_match"]


def _repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = tmp_path / "proj"
    (repo / "tests").mkdir(parents=True)
    (repo / "m.py").write_text(SRC)
    (repo / "tests" / "test_m.py").write_text(TESTS)
    return repo, {"m.py": SRC, "tests/test_m.py": TESTS}


async def _gate(tmp_path: Path, new: str, together: bool = False) -> tuple[object, list[str]]:
    repo, files = _repo(tmp_path)
    cand = RepairCandidate.from_diff(0, make_diff("m.py", SRC, new), "test", "fix")
    ran: list[str] = []
    path = f"{user_python().parent}{os.pathsep}{os.environ.get('PATH', '')}"

    async def run(sb: Workspace, cmd: str, what: str, timeout_s: float) -> CommandResult:
        return await sb.run(cmd, timeout_s=timeout_s, env={"PATH": path})

    with PlainWorkspace.create(repo, commands=ran) as ws:
        check = await behaviour_gate(
            cand, FAILING, ["tests/test_m.py"], files, ws.fork, run, 120.0, together=together
        )
    return check, ran


@pytest.mark.parametrize("together", [False, True], ids=["one-after-another", "at-once"])
async def test_a_fix_that_changes_a_passing_tests_answers_fails_the_check(
    tmp_path: Path, together: bool
):
    # passes both tests: the failing one now, the smoke test as before; but the rule
    # now fires on any command whose output says push
    wrong = SRC.replace(
        "'push' in script.split() and 'set-upstream' in script",
        "'push' in output.split() and 'set-upstream' in output",
    )
    check, ran = await _gate(tmp_path, wrong, together)
    assert check is not None and check.kind == "changes_behaviour"
    assert check.why.startswith("tests/test_m.py::test_smoke: match returned False before")
    assert "match returned True after" in check.why
    # the buggy tree, the patched one, and the buggy tree again for stability
    assert len(ran) == 3 and all(c.startswith("python -c ") for c in ran)


async def test_the_real_fix_changes_nothing_a_passing_test_sees(tmp_path: Path):
    real = SRC.replace("'set-upstream' in script", "'set-upstream' in output")
    check, ran = await _gate(tmp_path, real)
    assert check is None
    assert len(ran) == 2  # no difference: no third run


def test_changed_functions_are_matched_by_qualified_name_with_decorators() -> None:
    old = (
        "class A:\n    @staticmethod\n    def f(x):\n        return x\n\n"
        "    def g(self):\n        return 1\n"
    )
    new = old.replace("return x", "return -x")
    assert changed_functions(old, new) == ([(2, 3, "f")], [(2, 3, "f")])
    assert changed_functions(old, "def (") == ([], [])
    # a helper the fix adds is not compared (it has no "before")
    added = old + "\ndef h():\n    return 2\n"
    assert changed_functions(old, added) == ([], [])


def test_records_are_the_last_marked_line_and_a_forged_shape_is_none() -> None:
    real = '{"calls": {"t": ["f returned 1"]}, "passed": ["t"]}'
    out = f'noise\n{MARK}{{"calls": {{}}, "passed": []}}\nmore\n{MARK}{real}\n'
    assert read_records(out) == Records({"t": ("f returned 1",)}, frozenset({"t"}))
    assert read_records(f"x\n{MARK}[1, 2]\n") is None
    assert read_records(f'x\n{MARK}{{"calls": [], "passed": []}}\n') is None
    assert read_records(f"x\n{MARK}{{not json\n") is None
    assert read_records("no mark at all") is None
    # nested past the hostile-JSON reader's depth: no record, no RecursionError
    assert read_records(f"x\n{MARK}" + "[" * 5000 + "]" * 5000 + "\n") is None


def _records(calls: dict[str, tuple[str, ...]], failed: tuple[str, ...] = ()) -> Records:
    return Records(calls, frozenset(calls) - set(failed))


def test_failing_unstable_and_failed_tests_explain_a_change() -> None:
    calls = {"a.py::t1": ("f returned 1",), "a.py::t2": ("f returned 2",), "b.py::t": ("x",)}
    before = _records(calls)
    after = _records({"a.py::t1": ("f returned 9",), "a.py::t2": ("f returned 3",),
                      "b.py::t": ("y",)})  # fmt: skip
    again = _records({**calls, "b.py::t": ("z",)})
    # a.py::t1 is the failing test, b.py::t is not stable from run to run
    got = behaviour_changes(before, after, ["a.py::t1"], unstable_tests(before, again))
    assert got == [BehaviourChange("a.py::t2", "f returned 2", "f returned 3")]
    # a failing test given as a file names every test in it, and one given without its
    # parameters each parametrized case
    assert behaviour_changes(before, after, ["a.py"], ["b.py::t"]) == []
    cases = _records({"a.py::t[x]": ("1",), "a.py::t[y]": ("1",)})
    moved = _records({"a.py::t[x]": ("2",), "a.py::t[y]": ("2",)})
    assert behaviour_changes(cases, moved, ["a.py::t"]) == []
    assert len(behaviour_changes(cases, moved, ["a.py::t[x]"])) == 1
    # a test that failed on either tree is not one "that passed"
    failed_before = _records(calls, failed=("a.py::t2", "b.py::t"))
    assert behaviour_changes(failed_before, after, ["a.py::t1"]) == []
    check = behaviour_check(got)
    assert check is not None and check.why == "a.py::t2: f returned 2 before, f returned 3 after"
    assert behaviour_check([]) is None
    # the repository's values reach the report as one line without control characters
    loud = behaviour_check([BehaviourChange("t", "f returned '\x1b[31mred'", "f returned 'a\nb'")])
    assert loud is not None and "\x1b" not in loud.why and "\n" not in loud.why


async def test_a_snippet_reproduction_holds_the_fix_to_every_module_test(tmp_path: Path):
    """The report's code reproduced the bug, so no test of the project fails: each module
    test that passed both ways is one whose answers must not change (the whole stage)."""
    repo, _ = _repo(tmp_path)
    gate = (
        'python -c "import sys; from m import match; '
        "sys.exit(0 if match('git push', 'use git push --set-upstream') else 1)\""
    )
    path = f"{user_python().parent}{os.pathsep}{os.environ.get('PATH', '')}"
    ctx = RunContext.create(
        Repository(repo, is_git=False),
        models=None,
        options=AgentOptions(test_env={"PATH": path}, validation_slots=1),
        journal=Journal(FakeClock(), lambda e: None),
    )
    prior = BugRun(
        started=0.0,
        reproduction=Reproduction(gate, "snippet", "confirmed", "s", script="x", expected="True"),
        diagnosis=Diagnosis(root_cause=RootCause("m.py", 1, 2, "wrong string", "static")),
    )
    wrong = SRC.replace(
        "'push' in script.split() and 'set-upstream' in script",
        "'push' in output.split() and 'set-upstream' in output",
    )
    real = SRC.replace("'set-upstream' in script", "'set-upstream' in output")
    for new, level in ((wrong, VerdictLevel.PASSES_TESTS), (real, VerdictLevel.VALIDATED)):
        cand = RepairCandidate.from_diff(0, make_diff("m.py", SRC, new), "test", "fix")
        with PlainWorkspace.create(repo) as ws:
            v = await validate_candidates(prior, ctx, ws, [cand])
        assert v.level == level, v.summary
        assert [c.kind for c in v.failed] == (["changes_behaviour"] if new == wrong else [])


def test_an_object_is_not_compared_but_a_raise_is() -> None:
    before = _records({"t1": ("f returned <object>",), "t2": ("f returned <object>",),
                       "t3": ("f returned None",)})  # fmt: skip
    after = _records({"t1": ("f returned True",), "t2": ("f raised KeyError",),
                      "t3": ("f returned <object>",)})  # fmt: skip
    # a match object for True, or an object for None, may be a right fix's; an exception
    # where a value was is a change
    got = behaviour_changes(before, after, [])
    assert got == [BehaviourChange("t2", "f returned <object>", "f raised KeyError")]
    # a call more or fewer is a change too
    assert behaviour_changes(_records({"t": ("f returned 1",)}),
                             _records({"t": ("f returned 1", "f returned 1")}), []) == [
        BehaviourChange("t", "no call 2", "f returned 1")
    ]  # fmt: skip
