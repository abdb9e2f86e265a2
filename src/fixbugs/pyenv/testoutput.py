"""The one reader of a test run's text: outcomes, failure sections, exceptions, locations.

Every part of FixBugs that reads what a test run printed reads it here: the
verdict on a run (:mod:`fixbugs.pyenv.testverdict`), the environment's
failures (:mod:`fixbugs.pyenv.failures`), the before/after comparison of
validation, the repair's hints and progress, the eval's checks. So pytest's
and unittest's formats are known once, and one set of exception-name
patterns decides what an exception line is. Pure functions of text, linear
on hostile input (``tests/security/test_fuzz_parsers.py``).

What is read:

- how each test ended: ``pytest -v``'s ``id PASSED`` lines, ``unittest -v``'s
  ``name (mod.Class) ... ok`` (:func:`parse_outcomes`), and the short
  summary's ``FAILED id - message`` (:func:`summary_ids`);
- the counts of a run's last line (:func:`pytest_counts`, :func:`unittest_ran`,
  :func:`unittest_failed`) and what stopped it from running (a collection or
  import error, a missing node, a missing runner);
- the failing tests' sections (:func:`failures`): pytest's ``____ name ____``
  blocks under ``-rA``, ``--tb=short`` or ``--tb=long``, unittest's
  ``FAIL:``/``ERROR:`` blocks, and the exception each ends with
  (:func:`final_exception`), from :mod:`fixbugs.pyenv.raised`.

Test ids are read with :class:`fixbugs.pyenv.testid.TestId`.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass
from typing import Literal

from fixbugs.pyenv.raised import final_exception, traceback_lines

__all__ = [
    "Counts",
    "Failure",
    "Outcome",
    "Runner",
    "collect_error",
    "collection_error_in",
    "failure_excerpt",
    "failure_message",
    "failures",
    "import_error_in",
    "not_found",
    "parse_outcomes",
    "pytest_counts",
    "runner_missing",
    "summary_ids",
    "unittest_failed",
    "unittest_import_error",
    "unittest_ran",
]

Runner = Literal["pytest", "unittest", "other"]
Outcome = Literal["passed", "failed", "error", "skipped"]

# the file part holds no colon, so it ends at the first "::" (linear on a run of colons)
_PYTEST_LINE = re.compile(
    r"^(?P<id>[^\s:]++::\S.*?) (?P<out>PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b"
)
_UNITTEST_LINE = re.compile(
    r"^(?P<name>\w+) \((?P<cls>[\w.]+)\)(?:\n.*?)? \.\.\. (?P<out>ok|FAIL|ERROR|skipped.*)$"
)
_PYTEST_MAP: dict[str, Outcome] = {
    "PASSED": "passed",
    "FAILED": "failed",
    "ERROR": "error",
    "SKIPPED": "skipped",
    "XFAIL": "skipped",
    "XPASS": "passed",
}
_UNITTEST_MAP: dict[str, Outcome] = {"ok": "passed", "FAIL": "failed", "ERROR": "error"}

_PYTEST_SECTION = re.compile(r"^_{3,} (?P<name>\S.*?) _{3,}$", re.M)
_PYTEST_END = re.compile(r"^={5,}", re.M)
# ``-rA`` prints the passing tests' captured output under this banner, in sections too
_PYTEST_PASSES = re.compile(r"^={5,} PASSES ={5,}$", re.M)
_UNITTEST_SECTION = re.compile(r"^={20,}\n(?P<kind>FAIL|ERROR): (?P<name>[^\n]+)\n-{20,}\n", re.M)
_UNITTEST_END = re.compile(r"^(?:={20,}|-{20,})$", re.M)
_SUMMARY = re.compile(r"^(?:FAILED|ERROR) (?P<id>\S+)(?: - (?P<msg>.+))?$", re.M)
_SETUP = re.compile(r"^ERROR at (?:setup|teardown) of ")

_COLLECT = re.compile(r"^_* ?ERROR collecting (?P<what>\S+)", re.M)
_IMPORT = re.compile(r"^(?:E\s+)?ImportError while importing test module '?(?P<what>[^'\n]+)", re.M)
_NOT_FOUND = re.compile(r"^ERROR: (?:not found|file or directory not found): (?P<what>.+)$", re.M)
_COUNT = re.compile(r"\b(?P<n>\d+) (?P<kind>failed|passed|errors?|error)\b")
_NO_RUNNER = re.compile(r"No module named '?(?P<mod>pytest|unittest)'?")
_UNITTEST_RAN = re.compile(r"^Ran (?P<n>\d+) tests? in ", re.M)
_UNITTEST_FAILED = re.compile(r"FAILED \((?P<body>[^)]*)\)")
_UNITTEST_FAILED_N = re.compile(r"(?:failures|errors)=(\d+)")
_UNITTEST_IMPORT = re.compile(
    r"(?:unittest\.loader\._FailedTest|Failed to import test module: (?P<what>\S+))"
)


@dataclass(frozen=True, slots=True)
class Failure:
    """One failing test's part of a run's output.

    ``name`` is its heading (pytest's ``Class.test_x``, unittest's
    ``test_x (mod.Class)``), a node id from pytest's summary, or ``""`` for
    a run's whole output.
    """

    name: str
    text: str


@dataclass(frozen=True, slots=True)
class Counts:
    """pytest's last summary line: failing or erroring tests, and passing ones."""

    failed: int
    passed: int


def parse_outcomes(output: str) -> dict[str, Outcome]:
    """Per-test outcomes from ``pytest -v`` or ``unittest -v`` output."""
    out: dict[str, Outcome] = {}
    for line in output.splitlines():
        if m := _PYTEST_LINE.match(line):
            out[m["id"]] = _PYTEST_MAP[m["out"]]
        elif u := _UNITTEST_LINE.match(line):
            cls, name = u["cls"], u["name"]
            # Python >= 3.11 prints "name (module.Class.name)"
            key = cls if cls.endswith("." + name) else f"{cls}.{name}"
            out[key] = _UNITTEST_MAP.get(u["out"], "skipped")
    return out


def summary_ids(output: str) -> frozenset[str]:
    """The test ids pytest's short summary names ``FAILED`` or ``ERROR`` (a failing fixture)."""
    return frozenset(m["id"] for m in _SUMMARY.finditer(output))


def pytest_counts(output: str) -> Counts | None:
    """The counts of pytest's last summary line (``1 failed, 2 passed in 0.1s``), or None."""
    for line in reversed(output.strip().splitlines()):
        if " in " in line and (m := list(_COUNT.finditer(line))):
            failed = sum(int(x["n"]) for x in m if x["kind"] != "passed")
            passed = sum(int(x["n"]) for x in m if x["kind"] == "passed")
            return Counts(failed, passed)
    return None


def unittest_ran(output: str) -> int | None:
    """How many tests unittest's ``Ran N tests in …`` line says ran, or None without one."""
    m = _UNITTEST_RAN.search(output)
    return int(m["n"]) if m else None


def unittest_failed(output: str) -> int | None:
    """The failures and errors of unittest's ``FAILED (failures=1, errors=2)``, or None
    when no such line is printed."""
    m = _UNITTEST_FAILED.search(output)
    if m is None:
        return None
    return sum(int(n) for n in _UNITTEST_FAILED_N.findall(m["body"]))


def unittest_import_error(output: str) -> str | None:
    """The test module unittest failed to import ("" when it does not name it), or None."""
    m = _UNITTEST_IMPORT.search(output)
    return None if m is None else m["what"] or ""


def runner_missing(output: str) -> bool:
    """The output says pytest or unittest itself is not importable."""
    return _NO_RUNNER.search(output) is not None


def import_error_in(output: str) -> str | None:
    """The test module pytest says fails to import, or None."""
    m = _IMPORT.search(output)
    return m["what"].strip() if m else None


def collection_error_in(output: str) -> str | None:
    """What pytest says it could not collect (``ERROR collecting tests/t.py``), or None."""
    m = _COLLECT.search(output)
    return m["what"] if m else None


def not_found(output: str) -> str | None:
    """The node or file pytest says does not exist, at most 160 characters, or None."""
    m = _NOT_FOUND.search(output)
    return m["what"].strip()[:160] if m else None


def collect_error(output: str) -> str | None:
    """The first ``E   …`` line of pytest's first collection error, or None when none."""
    m = _COLLECT.search(output)
    if m is None:
        return None
    for line in output[m.end() :].splitlines():
        if line.startswith("E   "):
            return line[4:].strip()[:200]
    return "error while collecting"


def failures(runner: Runner, output: str) -> tuple[Failure, ...]:
    """The failing tests' sections of ``output``; the whole output when none is marked."""
    if runner == "pytest":
        found = _pytest_sections(output) or tuple(
            Failure(m["id"], m["msg"] or "") for m in _SUMMARY.finditer(output)
        )
    elif runner == "unittest":
        found = _unittest_sections(output)
    else:
        found = ()
    return found or (Failure("", output),)


def failure_excerpt(runner: Runner, output: str, *, limit: int = 8000) -> str:
    """The failing tests' sections, first ones first, at most ``limit`` characters.

    A run's last lines are often pytest's warnings summary (hundreds of
    lines on an old project), which pushes the traceback and the failed
    assertion out of any tail; these sections hold them. Without marked
    sections, the output's last ``limit`` characters.
    """
    found = failures(runner, output)
    if len(found) == 1 and not found[0].name:
        return output[-limit:]
    text = "\n".join(f"{f.name}\n{f.text.strip()}" for f in found)
    return text[:limit]


def failure_message(text: str) -> str:
    """What a failure says: pytest's ``E`` lines (an assertion's values, its full diff
    under ``-v``), else its final exception's message; "" when it shows none."""
    e_lines = [line[1:].strip() for line in traceback_lines(text) if line.startswith("E ")]
    if e_lines:
        return "\n".join(e_lines)
    final = final_exception(text)
    return final[1] if final is not None else ""


def _pytest_sections(output: str) -> tuple[Failure, ...]:
    marks = list(_PYTEST_SECTION.finditer(output))
    passes = _passes_blocks(output)
    out: list[Failure] = []
    for i, m in enumerate(marks):
        while passes and passes[0][1] <= m.start():
            passes.popleft()
        if passes and passes[0][0] < m.start():
            continue  # a passing test's captured output (``-rA``)
        if m["name"].startswith(("ERROR collecting", "warnings summary")):
            continue
        stop = marks[i + 1].start() if i + 1 < len(marks) else len(output)
        end = _PYTEST_END.search(output, m.end(), stop)
        body = output[m.end() : end.start() if end else stop]
        out.append(Failure(_SETUP.sub("", m["name"].strip()), body))
    return tuple(out)


def _passes_blocks(output: str) -> deque[tuple[int, int]]:
    """(start, end) of each ``==== PASSES ====`` block, up to the next ``====`` line."""
    blocks: deque[tuple[int, int]] = deque()
    at = 0
    while banner := _PYTEST_PASSES.search(output, at):
        end = _PYTEST_END.search(output, banner.end())
        blocks.append((banner.start(), end.start() if end else len(output)))
        at = end.start() if end else len(output)
    return blocks


def _unittest_sections(output: str) -> tuple[Failure, ...]:
    out: list[Failure] = []
    for m in _UNITTEST_SECTION.finditer(output):
        end = _UNITTEST_END.search(output, m.end())
        out.append(Failure(m["name"].strip(), output[m.end() : end.start() if end else None]))
    return tuple(out)
