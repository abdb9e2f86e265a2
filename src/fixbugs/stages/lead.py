"""Which passing candidate leads, and the verdict it earns (issue 44, items 1, 3, 4, 6).

Passing the tests is what the search (:mod:`fixbugs.repair.candidate_runs`)
proves; this module says what that proof is worth:

- :func:`judge` runs on each candidate that passed every gate, in the
  search: the checks its change fails (:mod:`fixbugs.repair.shapes`,
  :mod:`fixbugs.repair.demotions`), whether any test of the project
  reaches the changed module or its package by import, and the size of the change.
  A candidate with a failed check does not end the search.
- :func:`lead_order` is the choice among the candidates that passed: no
  failed check first, then not a high overfitting risk, then the smallest
  behavioural change (AST nodes added or removed), then score and rank. The
  first that passed is not the lead by being first.
- :func:`oracle_check`: a reproduction that is the report's own code, where
  the report does not say what the code should print, can only show that the
  failure is gone; a fix that any different output passes is not proven
  (issue 44, item 2), so the lead then fails that check.
- :func:`behaviour_gate`: the behavioural diff of the leading candidate
  (:mod:`fixbugs.repair.behaviour`): the changed module's tests run on the
  buggy and on the patched tree under a probe of the changed functions; a
  test that passed both ways but saw them answer differently is a failed
  check, a behaviour change no test or report explains.
- :func:`settle_lead`: the validation stage's last step: the package's tests
  and the behavioural diff on the leading candidate, side by side where
  validation has more than one process slot.
- :func:`package_gate`: the tests of the changed module's package (found by
  import, :func:`fixbugs.localize.signals.package_tests`) run once, on the
  leading candidate only, after the search (a cap of
  :data:`PACKAGE_TEST_FILES` files): one that breaks a test that passed
  before is rejected and the next passing candidate is tried
  (:data:`LEAD_TRIES` in all); tests that give no verdict are a failed check.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from fixbugs.diffs import apply_to_text, diff_files
from fixbugs.localize.signals import module_tests, package_tests
from fixbugs.pyenv.testrun import parse_test_command
from fixbugs.repair.behaviour import (
    Records,
    Spans,
    behaviour_changes,
    behaviour_check,
    changed_functions,
    probe_command,
    read_records,
    unstable_tests,
)
from fixbugs.repair.candidate_runs import default_limit
from fixbugs.repair.demotions import change_checks, change_size
from fixbugs.repair.gates import Runner, Stage, close, fork, in_thread, once
from fixbugs.repair.ranking import RepairCandidate
from fixbugs.repair.verdict import FailedCheck, shape_check
from fixbugs.run.context import RunContext
from fixbugs.run.progress import CandidateData
from fixbugs.run.record import Reproduction
from fixbugs.sandbox.executor import Workspace

__all__ = [
    "LEAD_TRIES",
    "MODULE_TEST_FILES",
    "PACKAGE_TEST_FILES",
    "behaviour_gate",
    "judge",
    "lead_order",
    "module_files",
    "oracle_check",
    "package_gate",
    "settle_lead",
]

MODULE_TEST_FILES = 8  # the changed module's test files run for every candidate that passes
PACKAGE_TEST_FILES = 12  # more of its package's, run once, for the leading candidate
LEAD_TRIES = 2  # passing candidates the package's tests are run for, at most


def module_files(path: str, failing: Sequence[str], files: Mapping[str, str]) -> list[str]:
    """The module stage's test files: the failing tests' and the changed module's (capped)."""
    return sorted(set(failing) | set(module_tests(path, files)[:MODULE_TEST_FILES]))


def oracle_check(repro: Reproduction) -> FailedCheck | None:
    """The weak oracle of a snippet reproduction whose report says nothing of the right output.

    Its gate (:func:`fixbugs.stages.snippet.gate_command`) passes once the snippet runs
    clean and no longer prints what the report shows: with no expected output to hold it
    to, a fix that only changes the failure passes. A test (given, found or the report's)
    asserts what it expects, so it is no weak oracle.
    """
    if repro.origin not in ("snippet", "written") or repro.expected is not None:
        return None
    what = "a script the model wrote" if repro.origin == "written" else "the report's code"
    return FailedCheck(
        "weak_oracle",
        f"{what} is the only reproduction and the report does not say what it "
        'should print or return; a report that says so ("I expected `...`") is checked for it',
    )


def package_gate(
    c: RepairCandidate,
    failing: Sequence[str],
    files: Mapping[str, str],
    timeout_s: float,
) -> Stage | None:
    """The package's tests the module stage did not run, as one baseline stage (pytest)."""
    extra = package_tests(c.path, files, exclude=module_files(c.path, failing, files))
    if not extra:
        return None
    cmd = "python -m pytest -v -p no:cacheprovider " + " ".join(
        shlex.quote(t) for t in extra[:PACKAGE_TEST_FILES]
    )
    return Stage("package", cmd, None, lazy_baseline=True, timeout_s=timeout_s)


def _texts(c: RepairCandidate, files: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(path, old text, new text) of each file ``c`` changes that is in the listing."""
    out: list[tuple[str, str, str]] = []
    for path in diff_files(c.diff) or [c.path]:
        old = files.get(path)
        new = c.new_text if path == c.path and c.new_text else None
        if old is not None and new is None:
            new = apply_to_text(old, c.diff, path)
        if old is not None and new is not None:
            out.append((path, old, new))
    return out


async def behaviour_gate(
    c: RepairCandidate,
    failing: Sequence[str],
    failing_files: Sequence[str],
    files: Mapping[str, str],
    make_fork: Callable[[], Workspace],
    run: Runner,
    timeout_s: float,
    *,
    together: bool = False,
) -> FailedCheck | None:
    """The behavioural diff of ``c`` on its module's tests (see the module doc); ``together``:
    the buggy and the patched run at once, where the caller has more than one process slot.

    ``failing``: the tests the bug fails (their behaviour is meant to change).
    ``None`` when nothing changed, and when it cannot say: no changed function,
    no test file, a run that timed out or printed no record.
    """
    olds: Spans = {}
    news: Spans = {}
    for path, old, new in _texts(c, files):
        was, now = changed_functions(old, new)
        if was:
            olds[path] = was
        if now:
            news[path] = now
    tests = module_files(c.path, failing_files, files)
    if not (olds and news) or not tests:
        return None

    async def records(spans: Spans, diff: str | None) -> Records | None:
        sb = await fork(make_fork)
        try:
            if diff is not None:
                applied = await in_thread(lambda: sb.apply_patch(diff))
                if not applied.applied:
                    return None
            res = await run(sb, probe_command(spans, tests), "behaviour", timeout_s)
        finally:
            await close(sb)
        return None if res.timed_out else read_records(res.stdout)

    if together:
        before, after = await asyncio.gather(records(olds, None), records(news, c.diff))
    else:
        before, after = await records(olds, None), await records(news, c.diff)
    if before is None or after is None:
        return None
    changes = behaviour_changes(before, after, failing)
    if changes:
        # a second run of the buggy tree: a record that differs from run to run says nothing
        again = await records(olds, None)
        if again is None:
            return None
        changes = behaviour_changes(before, after, failing, unstable_tests(before, again))
    return behaviour_check(changes)


def judge(
    files: Mapping[str, str], constants: frozenset[str]
) -> Callable[[RepairCandidate], RepairCandidate]:
    """What validation asks of a candidate that passed every gate (see the module doc).

    ``files``: path -> old text; ``constants``: the failing tests' literals
    (:func:`fixbugs.stages.sources.test_constants`).
    """
    tested: dict[str, bool] = {}

    def exercised(path: str) -> bool:
        if path not in tested:
            tested[path] = bool(module_tests(path, files) or package_tests(path, files, cap=1))
        return tested[path]

    def of(c: RepairCandidate) -> RepairCandidate:
        checks: list[FailedCheck] = []
        size = 0
        own = shape_check(c.shape) if c.shape is not None else None
        for path, old, new in _texts(c, files):
            checks += [x for x in change_checks(old, new, constants) if x != own]
            size += change_size(old, new)
            if not exercised(path):
                checks.append(
                    FailedCheck(
                        "untested",
                        f"no test file of the project imports {path} or a module of its "
                        "package, even through other modules, or is named for one",
                    )
                )
        return replace(c, checks=tuple(dict.fromkeys(checks)), change_nodes=size)

    return of


def lead_order(
    passing: Sequence[RepairCandidate], position: Mapping[int, int]
) -> list[RepairCandidate]:
    """The candidates that passed, the one that should lead first (see the module doc)."""
    return sorted(
        passing,
        key=lambda c: (
            c.looks_overfit,
            c.overfit_risk == "high",
            c.change_nodes if c.change_nodes is not None else c.size,
            -c.score,
            position.get(c.id, len(position)),
        ),
    )


def _held_to_oracle(c: RepairCandidate, repro: Reproduction) -> RepairCandidate:
    """The lead with the reproduction's weak oracle as a failed check, where it is weak."""
    weak = oracle_check(repro)
    return c if weak is None else replace(c, checks=(*c.checks, weak))


async def settle_lead(
    passing: Sequence[RepairCandidate],
    repro: Reproduction,
    files: Mapping[str, str],
    ctx: RunContext,
    workspace: Workspace,
    run: Runner,
) -> tuple[RepairCandidate | None, dict[int, str]]:
    """The leading fix once its package's tests (:func:`package_gate`) and its behavioural
    diff (:func:`behaviour_gate`) ran, with every check it fails, and the candidates the
    package's tests rejected (id -> why); at most :data:`LEAD_TRIES` are tried."""
    assert repro.command is not None
    parsed = parse_test_command(repro.command)
    broke: dict[int, str] = {}
    # the lead's checks side by side only where validation may run more than one process
    together = (ctx.options.validation_slots or default_limit()) > 1

    async def behaviour(c: RepairCandidate) -> FailedCheck | None:
        """The behavioural diff's failed check of ``c``, when its change shows one."""
        if c.looks_overfit:
            return None  # not validated anyway
        if parsed.runner == "pytest":
            failing = [t for t, o in repro.baseline.items() if o.lower() != "passed"]
            failing_files: Sequence[str] = parsed.files
        elif repro.origin in ("snippet", "written"):
            failing, failing_files = [], ()  # a script is no test of the project
        else:
            return None  # another runner's test ids: the probe's pytest ids would not match
        ctx.journal.note(
            "validation",
            f"behavioural diff of #{c.id}: its changed functions on the module's tests, "
            "before and after the change",
        )
        return await behaviour_gate(
            c, failing, failing_files, files, workspace.fork, run, ctx.options.suite_timeout_s,
            together=together,
        )  # fmt: skip

    def held(c: RepairCandidate, check: FailedCheck | None) -> RepairCandidate:
        c = c if check is None else replace(c, checks=(*c.checks, check))
        return _held_to_oracle(c, repro)

    for c in passing[:LEAD_TRIES]:
        stage = (
            package_gate(c, parsed.files, files, ctx.options.suite_timeout_s)
            if parsed.runner == "pytest"
            else None
        )
        if stage is None:
            return held(c, await behaviour(c)), broke
        ctx.journal.note("validation", f"running the package's tests on #{c.id}: {stage.command}")
        package = once(
            stage, c.diff, workspace.fork, run, ctx.options.test_timeout_s, together=together
        )
        check: FailedCheck | None = None
        if together:  # the package's tests and the behavioural diff at once, own forks each
            res, check = await asyncio.gather(package, behaviour(c))
        else:
            res = await package
        if res.broke is not None:
            broke[c.id] = f"rejected at package: {res.broke}"
            ctx.journal.emit(
                "candidate",
                "validation",
                f"rejected #{c.id} {c.why} at package: {res.broke}",
                CandidateData(),
            )
            continue
        if res.unjudged is not None:
            c = replace(c, checks=(*c.checks, FailedCheck("package_tests", res.unjudged)))
        if not together:
            check = await behaviour(c)
        return held(c, check), broke
    return None, broke
