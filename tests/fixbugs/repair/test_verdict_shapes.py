"""A fix that passes the tests in a demoting shape is never "validated" (issue 44).

Each case is a small repository made here (a package ``app`` with the buggy
module, a sibling module and their tests, one of which fails), validated for
real in :class:`~fixbugs.sandbox.testing.PlainWorkspace` forks (plain pytest
runs, no root). The only passing candidate of the first kind has the shape
under test: the verdict is ``passes tests`` with that failed check, in the
JSON, the markdown and the terminal line. When a clean candidate passes too,
ranked after it, the clean one leads and is ``validated``. And
``--apply`` refuses a fix that only passes the tests, unless ``--force``.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from userpython import user_python

from agentrt import FakeClock
from fixbugs.diffs import make_diff
from fixbugs.inputs.repo import Repository
from fixbugs.localize.signals import package_tests
from fixbugs.pyenv.userenv import Interpreter
from fixbugs.repair.demotions import change_checks
from fixbugs.repair.ranking import RepairCandidate
from fixbugs.repair.verdict import VerdictLevel
from fixbugs.run.agent import apply_report, env_for_interpreter
from fixbugs.run.context import AgentOptions, RunContext
from fixbugs.run.progress import Journal
from fixbugs.run.record import BugRun, Diagnosis, Reproduction, RootCause, Validation
from fixbugs.run.report import RunReport, build_report, verdict_line
from fixbugs.sandbox.testing import PlainWorkspace
from fixbugs.stages.lead import judge
from fixbugs.stages.validate import validate_candidates

PY = env_for_interpreter(Interpreter(user_python(), "--python"))
# the case's tests need no plugin: pytest starts four times faster without them
ENV = {**PY.command_env(), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}

HELPER = "def double(x):\n    return 2 * x\n"
HELPER_TEST = "from app.helper import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


@dataclass(frozen=True)
class Shape:
    """A buggy module, its tests (``test_bug`` fails), and two fixes that pass them."""

    kind: str
    buggy: str
    tests: str
    demoted: str  # passes the tests, in the shape ``kind``
    clean: str  # passes the tests, no demoting shape


SHAPES = [
    Shape(
        "swallows",
        "def first(items):\n    return items[0]\n",
        "def test_bug():\n    assert first([]) is None\n\n\n"
        "def test_ok():\n    assert first([3]) == 3\n",
        "def first(items):\n    try:\n        return items[0]\n"
        "    except IndexError:\n        return None\n",
        "def first(items):\n    return items[0] if items else None\n",
    ),
    Shape(
        "special_case",
        "def slug(s):\n    return s.replace(' ', '-')\n",
        "def test_bug():\n    assert slug('A B') == 'a-b'\n\n\n"
        "def test_ok():\n    assert slug('x y') == 'x-y'\n",
        "def slug(s):\n    if s == 'A B':\n        return 'a-b'\n    return s.replace(' ', '-')\n",
        "def slug(s):\n    return s.lower().replace(' ', '-')\n",
    ),
    Shape(
        "deletes_check",
        "def port(s):\n    n = int(s)\n    if n <= 0 or n > 6553:\n"
        "        raise ValueError('bad port')\n    return n\n",
        "def test_bug():\n    assert port('8080') == 8080\n\n\n"
        "def test_ok():\n    assert port('80') == 80\n",
        "def port(s):\n    n = int(s)\n    return n\n",
        "def port(s):\n    n = int(s)\n    if n <= 0 or n > 65535:\n"
        "        raise ValueError('bad port')\n    return n\n",
    ),
    Shape(
        "replaces_operand",
        "class Command:\n    def __init__(self, script, output):\n"
        "        self.script = script\n        self.output = output\n\n\n"
        "def match(command):\n    if 'push' in command.script:\n        return True\n"
        "    return False\n",
        "def test_bug():\n    assert not match(Command('pushd /tmp', ''))\n\n\n"
        "def test_ok():\n    assert not match(Command('ls', ''))\n",
        "class Command:\n    def __init__(self, script, output):\n"
        "        self.script = script\n        self.output = output\n\n\n"
        "def match(command):\n    if 'push' in command.output:\n        return True\n"
        "    return False\n",
        "class Command:\n    def __init__(self, script, output):\n"
        "        self.script = script\n        self.output = output\n\n\n"
        "def match(command):\n    if 'push' in command.script.split():\n        return True\n"
        "    return False\n",
    ),
    Shape(
        "changes_condition",
        "def fmt(value, raw=False, precision=None):\n    if raw:\n        return str(value)\n"
        "    p = 2 if precision is None else precision\n    return f'{value:.{p}f}'\n",
        "def test_bug():\n    assert fmt(1.25, raw=True, precision=1) == '1.2'\n\n\n"
        "def test_ok():\n    assert fmt(1.5) == '1.50'\n",
        "def fmt(value, raw=False, precision=None):\n"
        "    if raw and precision is None:\n        return str(value)\n"
        "    p = 2 if precision is None else precision\n    return f'{value:.{p}f}'\n",
        "def fmt(value, raw=False, precision=None):\n    if raw:\n"
        "        return str(value) if precision is None else f'{value:.{precision}f}'\n"
        "    p = 2 if precision is None else precision\n    return f'{value:.{p}f}'\n",
    ),
    Shape(
        "skips_effects",
        "class Job:\n    def __init__(self):\n        self.log = []\n        self.done = False\n\n"
        "    def finish(self, result):\n        self.log.append(result.upper())\n"
        "        self.done = True\n        return result\n",
        "def test_bug():\n    assert Job().finish(None) is None\n\n\n"
        "def test_ok():\n    assert Job().finish('a') == 'a'\n",
        "class Job:\n    def __init__(self):\n        self.log = []\n        self.done = False\n\n"
        "    def finish(self, result):\n        if result is None:\n            return None\n"
        "        self.log.append(result.upper())\n        self.done = True\n"
        "        return result\n",
        "class Job:\n    def __init__(self):\n        self.log = []\n        self.done = False\n\n"
        "    def finish(self, result):\n        if result is not None:\n"
        "            self.log.append(result.upper())\n        self.done = True\n"
        "        return result\n",
    ),
]

FAILING = "tests/test_mod.py::test_bug"
COMMAND = f"python -m pytest -v -p no:cacheprovider {FAILING}"
BEFORE = {FAILING: "failed", "tests/test_mod.py::test_ok": "passed"}


def _repo(tmp_path: Path, shape: Shape) -> Path:
    repo = tmp_path / "proj"
    (repo / "app").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "app" / "__init__.py").write_text("")
    (repo / "app" / "mod.py").write_text(shape.buggy)
    (repo / "app" / "helper.py").write_text(HELPER)
    (repo / "tests" / "test_mod.py").write_text(
        f"from app.mod import *  # noqa: F403\n\n\n{shape.tests}"
    )
    (repo / "tests" / "test_helper.py").write_text(HELPER_TEST)
    return repo


def _run(repo: Path) -> tuple[BugRun, RunContext]:
    ctx = RunContext.create(
        Repository(repo, is_git=False),
        models=None,
        options=AgentOptions(validation_slots=1, test_env=ENV, python=PY, stepwise=False),
        journal=Journal(FakeClock(), lambda _e: None),
    )
    verbose = "python -m pytest -v -p no:cacheprovider tests/test_mod.py"
    prior = BugRun(
        started=0.0,
        reproduction=Reproduction(COMMAND, "given", "confirmed", "fails", BEFORE, verbose),
        diagnosis=Diagnosis(root_cause=RootCause("app/mod.py", 1, 20, "the bug", "static")),
    )
    return prior, ctx


def _cand(id: int, old: str, new: str, why: str) -> RepairCandidate:
    return RepairCandidate.from_diff(id, make_diff("app/mod.py", old, new), "test", why)


async def _validate(repo: Path, cands: list[RepairCandidate]) -> tuple[Validation, BugRun]:
    prior, ctx = _run(repo)
    ws = PlainWorkspace.create(repo)
    try:
        v = await validate_candidates(prior, ctx, ws, cands)
    finally:
        ws.close()
    return v, prior.model_copy(update={"validation": v})


def test_each_shape_fails_its_buggy_test_and_both_fixes_pass_it(tmp_path: Path) -> None:
    """The kit is sound: the bug's test fails on the buggy module, both fixes pass it."""
    for i, shape in enumerate(SHAPES):
        for text, want in ((shape.buggy, 1), (shape.demoted, 0), (shape.clean, 0)):
            repo = _repo(tmp_path / f"{i}-{want}-{len(text)}", shape)
            (repo / "app" / "mod.py").write_text(text)
            res = subprocess.run(
                [str(user_python()), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                cwd=repo, capture_output=True, text=True, check=False, env=ENV,
            )  # fmt: skip
            assert (res.returncode != 0) == bool(want), (shape.kind, res.stdout[-600:])


@pytest.mark.parametrize("shape", SHAPES, ids=[s.kind for s in SHAPES])
async def test_the_only_passing_fix_in_a_demoting_shape_is_never_validated(
    tmp_path: Path, shape: Shape
) -> None:
    repo = _repo(tmp_path, shape)
    cands = [_cand(0, shape.buggy, shape.demoted, f"{shape.kind} fix")]
    v, run = await _validate(repo, cands)
    assert v.level == VerdictLevel.PASSES_TESTS and not v.validated, v.summary
    assert v.candidate is not None and v.candidate.id == 0
    assert shape.kind in [c.kind for c in v.failed]
    report = build_report(run, title="bug", environment=None, total_s=1.0)
    d = report.to_dict()
    assert d["verdict"] == "passes_tests" and d["validated"] is False and d["version"] == 3
    assert shape.kind in [c["kind"] for c in d["validation"]["failed_checks"]]
    md = report.markdown()
    assert "**Passes tests, not validated**" in md and "**Validated fix**" not in md
    line = verdict_line(report.model)
    assert line.startswith("verdict: passes tests (not validated): ")
    # every failed check, with its why, on the terminal line
    assert all(c.why in line for c in v.failed)
    # read back from its JSON (as the eval and the service do), the level stays
    assert RunReport.from_dict(d).model.verdict == VerdictLevel.PASSES_TESTS


@pytest.mark.parametrize("shape", SHAPES, ids=[s.kind for s in SHAPES])
async def test_a_clean_passing_fix_leads_a_demoted_one_ranked_first(
    tmp_path: Path, shape: Shape
) -> None:
    repo = _repo(tmp_path, shape)
    cands = [
        _cand(0, shape.buggy, shape.demoted, f"{shape.kind} fix"),
        _cand(1, shape.buggy, shape.clean, "clean fix"),
    ]
    v, run = await _validate(repo, cands)
    assert v.validated and v.candidate is not None and v.candidate.id == 1, v.summary
    assert v.failed == () and [c.id for c in v.overfitting] == [0]
    d = build_report(run, title="bug", environment=None, total_s=1.0).to_dict()
    assert d["verdict"] == "validated" and d["patch"] == cands[1].diff


async def test_the_smaller_of_two_clean_fixes_leads(tmp_path: Path) -> None:
    shape = SHAPES[0]
    repo = _repo(tmp_path, shape)
    bigger = (
        "def first(items):\n    if len(items) == 0:\n        value = None\n"
        "    else:\n        value = items[0]\n    return value\n"
    )
    cands = [
        _cand(0, shape.buggy, bigger, "bigger clean fix"),
        _cand(1, shape.buggy, shape.clean, "smaller clean fix"),
    ]
    prior, ctx = _run(repo)
    ctx = RunContext.create(
        Repository(repo, is_git=False),
        models=None,
        options=AgentOptions(validation_slots=1, test_env=ENV, python=PY, repair_alternatives=1),
        journal=Journal(FakeClock(), lambda _e: None),
    )
    ws = PlainWorkspace.create(repo)
    try:
        v = await validate_candidates(prior, ctx, ws, cands)
    finally:
        ws.close()
    assert v.validated and v.candidate is not None and v.candidate.id == 1, v.summary
    assert v.repair is not None and [f.id for f in v.repair.validated] == [1, 0]


async def test_a_lead_that_breaks_its_packages_tests_is_rejected(tmp_path: Path) -> None:
    """The package's tests (here ``tests/test_helper.py``, which imports a sibling module
    that uses the changed one) run once, on the lead: breaking one rejects it."""
    shape = SHAPES[0]
    repo = _repo(tmp_path, shape)
    (repo / "app" / "helper.py").write_text(
        "from app.mod import first\n\n\ndef double(x):\n    return 2 * first([x])\n"
    )
    # the bug's tests pass; the helper's ``double(2)`` now multiplies None
    breaks = "def first(items):\n    return items[0] if items and items[0] != 2 else None\n"
    cands = [_cand(0, shape.buggy, breaks, "breaks the helper")]
    v, _ = await _validate(repo, cands)
    assert v.level == VerdictLevel.NO_FIX, v.summary
    assert any("rejected at package" in r for r in v.rejected), v.rejected
    assert "broke the tests of the changed package" in v.summary


def test_a_change_no_test_of_the_project_reaches_is_untested() -> None:
    old = "def f(x):\n    return x + 1\n"
    files = {"app/mod.py": old, "app/__init__.py": "", "tests/test_other.py": "import os\n"}
    c = _cand(0, old, "def f(x):\n    return x + 2\n", "a change")
    judged = judge(files, frozenset())(c)
    assert [x.kind for x in judged.failed_checks] == ["untested"]
    files["tests/test_mod.py"] = "from app.mod import f\n"
    assert judge(files, frozenset())(c).failed_checks == ()


def test_a_test_that_reaches_the_module_through_others_counts_within_the_hops() -> None:
    old = "def f(x):\n    return x + 1\n"
    c = _cand(0, old, "def f(x):\n    return x + 2\n", "a change")  # app/mod.py
    files = {
        "app/mod.py": old,  # its package holds no other module
        "app/__init__.py": "",
        "web/__init__.py": "from web.api import run\n",
        "web/api.py": "from web.core import go\n",
        "web/core.py": "from app.mod import f\n",
        "tests/test_web.py": "import web\n",  # web -> api -> core -> mod: 4 imports away
    }
    assert [x.kind for x in judge(files, frozenset())(c).failed_checks] == ["untested"]
    assert package_tests("app/mod.py", files) == []
    files["tests/test_api.py"] = "from web.api import run\n"  # api -> core -> mod: 3 away
    assert judge(files, frozenset())(c).failed_checks == ()
    assert package_tests("app/mod.py", files) == ["tests/test_api.py"]
    files["tests/test_core.py"] = "import web.core\n"  # the nearer comes first
    assert package_tests("app/mod.py", files) == ["tests/test_core.py", "tests/test_api.py"]


def _report(level: VerdictLevel, patch: str) -> RunReport:
    data = {
        "title": "t",
        "ranked_files": [],
        "root_cause": None,
        "patch": patch,
        "validated": level == VerdictLevel.VALIDATED,
        "verdict": level.value,
        "validation": {"summary": "s", "tried": 1},
        "reproduction": {"command": None, "origin": "given", "confirmed": True, "summary": ""},
        "first_hypothesis_s": None,
        "total_s": 1.0,
        "stages": {},
    }
    return RunReport.from_dict(data)


def test_apply_refuses_a_fix_that_only_passes_tests_without_force(tmp_path: Path) -> None:
    old, new = "x = 1\n", "x = 2\n"
    tree = tmp_path / "work"
    tree.mkdir()
    (tree / "m.py").write_text(old)
    patch = make_diff("m.py", old, new)
    message = apply_report(_report(VerdictLevel.PASSES_TESTS, patch).model, tree)
    assert message.startswith("not applied: the fix passes tests but is not validated")
    assert (tree / "m.py").read_text() == old
    message = apply_report(_report(VerdictLevel.PASSES_TESTS, patch).model, tree, force=True)
    assert "applied" in message and "not validated (--force)" in message
    assert (tree / "m.py").read_text() == new
    (tree / "m.py").write_text(old)
    assert "validated patch applied" in apply_report(
        _report(VerdictLevel.VALIDATED, patch).model, tree
    )
    assert (tree / "m.py").read_text() == new


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        # a widened condition: its branch now runs for something it did not test
        ("def f(name, strip):\n    if strip:\n        name = name.strip()\n    return name\n",
         "def f(name, strip):\n    if strip or name.startswith(' '):\n"
         "        name = name.strip()\n    return name\n", "changes_condition"),
        # a bare except that does something: not a swallow, still every error caught
        ("def f(d, k):\n    return d[k]\n",
         "def f(d, k):\n    try:\n        return d[k]\n"
         "    except:\n        return d.get(k.lower())\n",
         "bare_except"),
        # a number of the failing test, compared with
        ("def f(n):\n    return n * 2\n",
         "def f(n):\n    if n == 21:\n        return 42\n    return n * 2\n", "special_case"),
        # a shorter text to search for: the returned condition holds for more commands
        ("def match(c):\n    return 'php -s' in c.script\n",
         "def match(c):\n    return '-s' in c.script\n", "changes_condition"),
        ("def match(c):\n    if c.script.startswith('git push'):\n        return 1\n",
         "def match(c):\n    if c.script.startswith('git'):\n        return 1\n",
         "changes_condition"),
        # ... or to exclude: it holds for fewer
        ("def ok(s):\n    return '--all' not in s\n",
         "def ok(s):\n    return '-' not in s\n", "changes_condition"),
        # a loop that used every item now drops the bad one instead of mending its source
        ("def build(sel):\n    return [f(s) for s in sel]\n",
         "def build(sel):\n    return [f(s) for s in sel if s is not None]\n",
         "changes_condition"),
        ("def send(headers):\n    for k, v in headers:\n        put(k, v.decode())\n",
         "def send(headers):\n    for k, v in headers:\n        if v is None:\n"
         "            continue\n        put(k, v.decode())\n", "changes_condition"),
    ],
    ids=["widened", "bare-except", "number", "shorter-in", "shorter-prefix", "shorter-not-in",
         "filter-added", "continue-added"],
)  # fmt: skip
def test_pure_demoting_shapes(old: str, new: str, kind: str) -> None:
    checks = change_checks(old, new, frozenset({"21", "42"}))
    assert kind in [c.kind for c in checks]


def test_a_literal_the_function_compared_with_before_is_no_special_case() -> None:
    # black-17's real fix: the comparison changes, its "\n" (a failing test's value) was there
    old = 'def parse(src):\n    if src[-1] != "\\n":\n        src += "\\n"\n    return src\n'
    new = old.replace("src[-1] !=", "src[-1:] !=")
    assert change_checks(old, new, frozenset({"\n"})) == ()
    # the same literal brought into a comparison the function did not make: the test's case
    added = old.replace(
        "    return src\n", '    if src == "\\n":\n        return ""\n    return src\n'
    )
    assert [c.kind for c in change_checks(old, added, frozenset({"\n"}))] == ["special_case"]


def test_another_text_to_match_that_is_not_a_part_of_the_old_is_no_demotion() -> None:
    # thefuck-7's real fix: ' -s ' is not a part of 'php -s'; matching it is not wider
    old = "def match(c):\n    return 'php -s' in c.script\n"
    assert change_checks(old, old.replace("'php -s'", "' -s '")) == ()
    assert change_checks(old, old.replace("'php -s'", "'php -s '")) == ()


def test_a_filter_changed_or_on_more_than_the_item_is_no_skipped_item() -> None:
    # luigi-33's real fix: the filter was there and tests another attribute now
    old = "def pos(params):\n    return [(n, p) for n, p in params if p.significant]\n"
    assert change_checks(old, old.replace("p.significant", "not p.is_global")) == ()
    # a filter on something else than the item is not a dropped value
    plain = "def build(sel, on):\n    return [f(s) for s in sel]\n"
    assert change_checks(plain, plain.replace("in sel]", "in sel if on]")) == ()


def test_a_guard_on_what_the_condition_tests_is_no_demotion() -> None:
    old = "def f(x):\n    if x.ready:\n        return 1\n    return 0\n"
    new = "def f(x):\n    if x is not None and x.ready:\n        return 1\n    return 0\n"
    assert change_checks(old, new) == ()


def test_an_early_return_before_local_work_only_is_no_demotion() -> None:
    # black-17's real fix: an edge case returns before work on the function's own locals
    old = (
        "import io\n\n\ndef decode(src):\n    buf = io.BytesIO(src)\n    lines = buf.readlines()\n"
        "    first = lines[0]\n    buf.seek(0)\n    parts = [first]\n    parts[0] = first.strip()\n"
        "    return parts\n"
    )
    new = old.replace(
        "    first = lines[0]\n", "    if not lines:\n        return []\n    first = lines[0]\n"
    )
    assert change_checks(old, new) == ()


def test_an_early_return_before_work_on_a_parameter_demotes() -> None:
    old = "def add(items, x):\n    y = x * 2\n    items.append(y)\n    return y\n"
    new = old.replace("    items.append", "    if y > 9:\n        return x\n    items.append")
    assert [c.kind for c in change_checks(old, new)] == ["skips_effects"]
