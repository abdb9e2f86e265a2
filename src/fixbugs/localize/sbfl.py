"""Spectrum-based fault localization: Ochiai over per-test line coverage.

A line run by every failing test and by few passing ones is suspect:
``ochiai(l) = ef / sqrt(F * (ef + ep))`` with ``ef``/``ep`` the failing /
passing tests covering ``l`` and ``F`` all failing tests. A file scores its
best line. The core (:func:`ochiai`, :func:`suspicious_ranges`,
:func:`spectrum_from_coverage`) is pure; :func:`run_sbfl` is the thin driver
that runs the test files once under ``coverage`` with per-test dynamic
contexts (one run, not one per test), through an executor (a sandbox fork,
:class:`fixbugs.sandbox.Executor`), and reads the outcomes from pytest -v.
The per-line contexts are written by FixBugs' own small reader, run by the
tests' interpreter as ``python -c``: each context named once, each line a
list of its indices. ``coverage json --show-contexts`` repeats every context
name on every line: 104-283 MB on black's and tornado's dev-wide cases, over
the cap. FixBugs writes its helper files into the copy before the tests run
and nothing after: they may have planted a link, a hard link or a FIFO at
any name there (:class:`fixbugs.sandbox.untrusted.HostFolder`).
Coverage runs with FixBugs' own settings alone: its rcfile, not the
project's coverage sections, and the project's pytest-cov switched off.
The coverage report is the tests' to write (a package of the repository may
shadow ``coverage``): its paths are data, and only those naming a file of the
pristine baseline (:class:`fixbugs.sandbox.reported.CopyPaths`) are scored.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from fixbugs.index import is_test_path
from fixbugs.localize.evidence import FileEvidence
from fixbugs.pyenv.testid import TestId
from fixbugs.sandbox.executor import Executor
from fixbugs.sandbox.reported import CopyPaths
from fixbugs.sandbox.untrusted import (
    HostFolder,
    UntrustedFile,
    not_a_regular_file,
    read_untrusted,
    remove_tree,
)

__all__ = [
    "SbflResult",
    "Spectrum",
    "baseline_spectrum",
    "context_key",
    "node_key",
    "ochiai",
    "run_sbfl",
    "sbfl_evidence",
    "score_runs",
    "spectrum_from_coverage",
    "suspicious_ranges",
]

_MAX_COVERAGE_BYTES = 64 << 20
_REPORT_TIMEOUT_S = 60.0
# FixBugs' own coverage configuration. Given with --rcfile, it is the only one coverage.py
# reads (a project's .coveragerc, setup.cfg, tox.ini or pyproject.toml [coverage:*]
# sections are not): its data goes where only FixBugs reads it. ``data_file`` is set here,
# not with --data-file, which coverage.py before 6.3 (Python 3.6's) lacks.
_COVERAGE_RC = """[run]
dynamic_context = test_function
relative_files = true
data_file = {data}
"""
# The project's pytest-cov (``addopts = --cov``) would start a coverage of its own over
# FixBugs' and take its data ("No data to report"): it is blocked with ``-p no:cov``, and
# this stand-in plugin accepts its options so that the project's addopts still parse.
_PLUGIN = "fixbugs_sbfl_nocov"
_PLUGIN_SOURCE = '''"""FixBugs' stand-in for pytest-cov under SBFL: takes its options, no more."""


def pytest_addoption(parser):
    group = parser.getgroup("cov", "pytest-cov options (ignored: FixBugs measures coverage)")
    for name in ("--cov", "--cov-report"):
        group.addoption(name, action="append", nargs="?", const=True, default=[],
                        dest="fixbugs_ignored" + name.replace("-", "_"))
    for name in ("--cov-config", "--cov-fail-under", "--cov-context", "--cov-precision"):
        group.addoption(name, action="store", default=None,
                        dest="fixbugs_ignored" + name.replace("-", "_"))
    for name in ("--cov-reset", "--cov-append", "--cov-branch", "--no-cov", "--no-cov-on-fail"):
        group.addoption(name, action="store_true", default=False,
                        dest="fixbugs_ignored" + name.replace("-", "_"))
'''

# The contexts report, run by the tests' interpreter (Python 3.6 and later, coverage.py
# 5.1 and later): {"contexts": [name, ...], "files": {path: {line: [context index, ...]}}}.
# It runs as ``python -c SOURCE NAME DATA OUT``: no file of it is written where the tests
# ran. NAME (the reader's name, unused) tells the command apart in a process listing.
_READER = "fixbugs_sbfl_report"
_SCRATCH = ".fixbugs-sbfl-"
_REPORT_SOURCE = '''"""FixBugs' SBFL reader: which test contexts ran each measured line."""
import json
import sys

from coverage import CoverageData

data = CoverageData(basename=sys.argv[2])
data.read()
index = {}
files = {}
for path in sorted(data.measured_files()):
    lines = {}
    for line, names in sorted((data.contexts_by_lineno(path) or {}).items()):
        ids = sorted(index.setdefault(n, len(index)) for n in names if n)
        if ids:
            lines[str(line)] = ids
    if lines:
        files[path] = lines
names = sorted(index, key=index.get)
with open(sys.argv[3], "w") as out:
    json.dump({"contexts": names, "files": files}, out, separators=(",", ":"))
'''


@dataclass(frozen=True, slots=True)
class Spectrum:
    """Which tests ran each line (``file → line → test keys``), and how each test ended."""

    coverage: Mapping[str, Mapping[int, frozenset[str]]]
    failed: frozenset[str]
    passed: frozenset[str]


@dataclass(frozen=True, slots=True)
class SbflResult:
    file_scores: dict[str, float] = field(default_factory=dict)
    line_scores: dict[str, dict[int, float]] = field(default_factory=dict)
    failed_tests: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def ranges(self, path: str) -> tuple[tuple[int, int], ...]:
        return suspicious_ranges(self.line_scores.get(path, {}))


def ochiai(spectrum: Spectrum) -> SbflResult:
    """Ochiai per line and per file (the file's best line). No failing test → empty result."""
    n_failed = len(spectrum.failed)
    if n_failed == 0:
        return SbflResult(notes=("no failing test in the spectrum; SBFL has nothing to say",))
    lines: dict[str, dict[int, float]] = {}
    for path, by_line in spectrum.coverage.items():
        scores: dict[int, float] = {}
        for line, tests in by_line.items():
            ef = len(tests & spectrum.failed)
            if ef:
                ep = len(tests & spectrum.passed)
                scores[line] = ef / math.sqrt(n_failed * (ef + ep))
        if scores:
            lines[path] = scores
    files = {p: max(s.values()) for p, s in lines.items()}
    return SbflResult(files, lines, tuple(sorted(spectrum.failed)))


def suspicious_ranges(
    scores: Mapping[int, float], *, rel: float = 0.999, gap: int = 3, limit: int = 5
) -> tuple[tuple[int, int], ...]:
    """Ranges of the file's top-scoring lines; lines at most ``gap`` apart join one range."""
    if not scores:
        return ()
    top = max(scores.values())
    picked = sorted(line for line, s in scores.items() if s >= top * rel)
    ranges: list[list[int]] = []
    for line in picked:
        if ranges and line - ranges[-1][1] <= gap:
            ranges[-1][1] = line
        else:
            ranges.append([line, line])
    return tuple((a, b) for a, b in ranges[:limit])


def score_runs(scores: Mapping[int, float]) -> tuple[tuple[int, int, float], ...]:
    """The lines a failing test ran (score above 0) as runs of consecutive lines with one
    score, ``(first, last, score)``: a file's whole spectrum in a few hundred triples."""
    runs: list[tuple[int, int, float]] = []
    for line in sorted(ln for ln, sc in scores.items() if sc > 0):
        sc = round(scores[line], 4)
        if runs and runs[-1][1] == line - 1 and runs[-1][2] == sc:
            runs[-1] = (runs[-1][0], line, sc)
        else:
            runs.append((line, line, sc))
    return tuple(runs)


def node_key(node_id: str) -> str:
    """``tests/a/test_x.py::C::t[p]`` → ``test_x.C.t``: comparable with a coverage context."""
    tid = TestId.parse(node_id)
    return ".".join([PurePosixPath(tid.path).stem, *[p for p in tid.names if p]])


def context_key(context: str, keys: Sequence[str]) -> str | None:
    """The test key a coverage context (``pkg.tests.test_x.C.t``) belongs to, if any."""
    for key in keys:
        if context == key or context.endswith("." + key):
            return key
    return None


def spectrum_from_coverage(report: Mapping[str, object], outcomes: Mapping[str, str]) -> Spectrum:
    """Build a spectrum from the contexts report (:data:`_REPORT_SOURCE`'s) and
    per-test-id outcomes.

    Parametrized ids share one context (the test function), which fails if any
    of its ids failed or errored.
    """
    failed: set[str] = set()
    seen: set[str] = set()
    for node_id, outcome in outcomes.items():
        key = node_key(node_id)
        seen.add(key)
        if outcome in ("failed", "error"):
            failed.add(key)
    keys = sorted(seen, key=len, reverse=True)  # longest first: "C.test_a_b" before "test_b"
    cov: dict[str, dict[int, frozenset[str]]] = {}
    names, files = report.get("contexts", []), report.get("files", {})
    assert isinstance(names, list) and isinstance(files, dict)
    # each context resolved to its test once, not once a line
    tests_of = [context_key(c, keys) if isinstance(c, str) and c else None for c in names]
    for path, lines in files.items():
        assert isinstance(lines, dict)
        by_line: dict[int, frozenset[str]] = {}
        for line, ids in lines.items():
            tests = {k for i in ids if 0 <= i < len(tests_of) and (k := tests_of[i])}
            if tests:
                by_line[int(line)] = frozenset(tests)
        if by_line:
            cov[str(path).removeprefix("./")] = by_line
    return Spectrum(cov, frozenset(failed), frozenset(seen - failed))


def sbfl_evidence(result: SbflResult, *, top: int = 15) -> list[FileEvidence]:
    """Non-test files with a positive Ochiai score, best first."""
    ranked = sorted(
        ((s, p) for p, s in result.file_scores.items() if not is_test_path(p) and s > 0),
        reverse=True,
    )[:top]
    out: list[FileEvidence] = []
    for score, path in ranked:
        ranges = result.ranges(path)
        where = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in ranges[:3])
        out.append(FileEvidence(path, "sbfl", score, f"Ochiai {score:.2f} (lines {where})", ranges))
    return out


async def run_sbfl(
    executor: Executor,
    python: Path,
    test_files: Sequence[str],
    *,
    timeout_s: float = 180.0,
    env: Mapping[str, str] | None = None,
    baseline: Path | None = None,
    listed: Collection[str] | None = None,
) -> SbflResult:
    """Run ``test_files`` once under coverage through ``executor`` and score lines.

    The executor's tree (:attr:`Executor.root`) is a throwaway copy. Only
    files of ``baseline`` (the pristine tree it was copied from; without one,
    the tree itself) get scores, and of ``listed`` (the repository's file
    listing) when given; see :class:`CopyPaths`.
    """
    if not test_files:
        return SbflResult(notes=("no test files to run; SBFL skipped",))
    root = executor.root
    # Scratch space inside the tree: the tree is a throwaway copy, and a
    # sandboxed runner can write nowhere else. World-writable because the
    # contained command runs under another uid. FixBugs writes there before
    # the tests run, through a descriptor (its helper files, fresh, read-only);
    # after they ran it only reads (no link followed) and removes it.
    with HostFolder.make(root, prefix=_SCRATCH, mode=0o700) as scratch:
        try:
            rc, data = scratch.path / "coveragerc", scratch.path / "data"
            scratch.write("coveragerc", _COVERAGE_RC.format(data=data).encode(), mode=0o444)
            scratch.write(f"{_PLUGIN}.py", _PLUGIN_SOURCE.encode(), mode=0o444)
            scratch.chmod(0o777)
            measured = await _measure(executor, python, test_files, rc, timeout_s, env)
        finally:
            remove_tree(scratch.path)
    if isinstance(measured, SbflResult):
        return measured
    # the sandbox binds the copy at its own path: that is where the run saw it
    paths = CopyPaths.of(baseline or root, seen_at=(root,), listed=listed)
    spectrum, note = baseline_spectrum(measured, paths)
    result = ochiai(spectrum)
    return replace(result, notes=(*result.notes, note)) if note else result


async def _measure(
    executor: Executor,
    python: Path,
    test_files: Sequence[str],
    rc: Path,
    timeout_s: float,
    env: Mapping[str, str] | None,
) -> Spectrum | SbflResult:
    """The coverage run and the contexts report, in ``rc``'s folder: a spectrum, or why not."""
    from fixbugs.pyenv.testoutput import parse_outcomes

    root, tmp = executor.root, rc.parent
    data, out_json = tmp / "data", tmp / "cov.json"
    run_env = {**(env or {}), "PYTHONPATH": _path_first(str(tmp), (env or {}).get("PYTHONPATH"))}
    cov = [str(python), "-m", "coverage"]
    run = await executor.run(
        [
            *cov,
            "run",
            f"--rcfile={rc}",
            "-m",
            "pytest",
            "-v",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:cov",
            "-p",
            _PLUGIN,
            *test_files,
        ],
        timeout_s=timeout_s,
        env=run_env,
    )
    if run.timed_out:
        return SbflResult(notes=(f"tests under coverage ran past {timeout_s:.0f}s; SBFL skipped",))
    output = run.stdout + run.stderr
    outcomes = parse_outcomes(output)
    if not outcomes:
        tail = output.strip().splitlines()[-1:] or ["no output"]
        return SbflResult(
            notes=(f"no test outcomes under coverage ({tail[0][:120]}); SBFL skipped",)
        )
    # the reader is a program text, not a file: nothing is written after the tests ran
    report = await executor.run(
        [str(python), "-c", _REPORT_SOURCE, _READER, str(data), str(out_json)],
        timeout_s=_REPORT_TIMEOUT_S,
        env=run_env,
    )
    if report.timed_out:  # what it wrote is cut short, or it wrote into a planted FIFO
        planted = not_a_regular_file(out_json)
        if planted:
            return SbflResult(notes=(f"the coverage report failed ({planted})",))
        return SbflResult(
            notes=(f"the coverage report ran past {_REPORT_TIMEOUT_S:.0f}s; SBFL skipped",)
        )
    # cov.json was written where the tests ran: it may be a FIFO, a link to
    # /dev/zero or huge. Read it without following links, capped, off the loop.
    try:
        raw = await read_untrusted(
            out_json, max_bytes=_MAX_COVERAGE_BYTES, timeout_s=30, within=root
        )
        return spectrum_from_coverage(json.loads(raw), outcomes)
    except UntrustedFile as exc:
        said = (report.stdout + report.stderr).strip()[:160]
        return SbflResult(notes=(f"the coverage report failed ({exc}): {said}",))
    except (ValueError, TypeError, AttributeError, AssertionError):
        return SbflResult(notes=("the coverage report is not one; SBFL skipped",))


def _path_first(folder: str, rest: str | None) -> str:
    """``folder`` first on a ``PYTHONPATH``, before what was there (the coverage overlay)."""
    return os.pathsep.join([folder, *([rest] if rest else [])])


def baseline_spectrum(spectrum: Spectrum, paths: CopyPaths) -> tuple[Spectrum, str | None]:
    """The spectrum of the baseline's files alone (relative paths), and a note on the rest.

    Two reported forms of one file (relative and absolute) merge into one.
    """
    kept = paths.keep(spectrum.coverage)
    cov: dict[str, dict[int, frozenset[str]]] = {}
    for raw, rel in kept.kept.items():
        merged = cov.setdefault(rel, {})
        for line, tests in spectrum.coverage[raw].items():
            merged[line] = merged.get(line, frozenset()) | tests
    return Spectrum(cov, spectrum.failed, spectrum.passed), kept.note("the coverage report")
