"""Finding a test command when the user gave none.

In order: a test command in the report (a code block, a "steps to
reproduce" section, a ``$ pytest …`` line); a test function named in the
report's traceback (``tests/test_x.py`` frame of ``test_y`` becomes
``python -m pytest tests/test_x.py -k test_y``); else the existing test
modules of the top-ranked files are run once and a failing test whose failure
is the one the report shows is kept (:func:`matching_failure` says which
evidence matched). When none works the reproduction says so, and
localization stands on static evidence alone.

The text-only parts (:func:`command_from_report`, :func:`command_from_frames`,
:func:`matching_failure`) are pure functions; the existing tests of a file
are :func:`fixbugs.localize.signals.module_tests`'s.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from fixbugs.index import is_test_path
from fixbugs.inputs import pieces as bounded
from fixbugs.inputs.fences import fenced_blocks
from fixbugs.localize.traceback import ParsedFailure, parse_failure
from fixbugs.pyenv.failures import environment_signature
from fixbugs.pyenv.raised import final_exception
from fixbugs.pyenv.testid import TestId
from fixbugs.pyenv.testoutput import Failure, failure_message, failures

__all__ = [
    "FailureMatch",
    "command_from_frames",
    "command_from_report",
    "matching_failure",
]

_TEST_CMD = re.compile(
    r"^[ \t]*(?:[$>][ \t]*)?((?:python\d?(?:\.\d+)? -m (?:pytest|unittest)|pytest|py\.test|tox|nox|"
    r"make test|npm test|go test|cargo test)\b.*)$",
    re.M,
)
_STEPS = re.compile(
    r"^#+\s*(?:steps\s+to\s+reproduce|reproduc\w*|how\s+to\s+reproduce)\b.*$", re.I | re.M
)
_INLINE = re.compile(r"`((?:python\d?(?:\.\d+)? -m pytest|pytest|py\.test) [^`\n]+)`")
_PROMPT = re.compile(r"^(?:\$|>>>|\.\.\.|>)\s+")
_QUOTED = re.compile(r"['\"`]([^'\"`\n]{6,80})['\"`]")
_REPORT_EXC = re.compile(
    r"\b(?P<type>(?:[A-Za-z_]\w*\.){0,16}[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure))"
    r"(?::[ \t]*(?P<msg>[^\n`]*))?"
)


def command_from_report(text: str) -> str | None:
    """The first test command in a code block, a reproduce section or inline code."""
    for block in (f.body for f in fenced_blocks(text)):
        m = _TEST_CMD.search(block)
        if m:
            return m.group(1).strip()
    steps = _STEPS.search(text)
    if steps:
        section = text[steps.end() :].split("\n#", 1)[0]
        m = _TEST_CMD.search(section)
        if m:
            return m.group(1).strip().strip("`")
    m = bounded.search(_INLINE, text)
    return m.group(1).strip() if m else None


def command_from_frames(failure: ParsedFailure | None, files: Collection[str]) -> str | None:
    """A pytest command for the test functions the report's traceback passes through."""
    if failure is None:
        return None
    ids = [t for t in failure.failing_tests if TestId.parse(t).path in files]
    if ids:
        return "python -m pytest -p no:cacheprovider " + " ".join(shlex.quote(t) for t in ids)
    for frame in failure.frames:
        if (
            frame.path in files
            and frame.path is not None
            and is_test_path(frame.path)
            and (frame.function or "").startswith("test")
        ):
            return (
                f"python -m pytest -p no:cacheprovider {shlex.quote(frame.path)} "
                f"-k {shlex.quote(str(frame.function))}"
            )
    return None


@dataclass(frozen=True, slots=True)
class FailureMatch:
    """A discovered failing test that fails as the report shows, and the evidence that matched."""

    test_id: str
    # "exception ZeroDivisionError: division by zero", "output 'man 3 read' in its message",
    # "input 'cut,git,sed' in its parameters", "frame pkg/a.py in add"
    evidence: str


def _report_exceptions(failure: ParsedFailure | None, report: str) -> list[tuple[str, str]]:
    """(short type, message) of each exception the report shows, its traceback's first."""
    out: list[tuple[str, str]] = []
    if failure is not None and failure.exception_type:
        out.append((_short(failure.exception_type), (failure.exception_message or "").strip()))
    for m in bounded.finditer(_REPORT_EXC, report):
        out.append((_short(m["type"]), (m["msg"] or "").strip().rstrip(".,;:").strip()))
    return list(dict.fromkeys(out))


def _report_texts(report: str) -> list[str]:
    """What the report quotes or shows in code blocks (its output, its input), 6+ chars each."""
    quoted = bounded.findall(_QUOTED, report)[:10]
    shown = [
        _PROMPT.sub("", line.strip())
        for block in (f.body for f in fenced_blocks(report))
        for line in block.splitlines()
    ]
    return list(dict.fromkeys(t for t in (*quoted, *shown) if 6 <= len(t) <= 200))


def _short(kind: str) -> str:
    return kind.rsplit(".", 1)[-1]


def _same_message(report: str, seen: str) -> bool:
    """The report's message and the test's agree: equal, or the shorter (8+ chars) in the other."""
    a, b = " ".join(report.split()), " ".join(seen.split())
    if not a or not b:
        return False
    short, long = sorted((a, b), key=len)
    return a == b or (len(short) >= 8 and short in long)


def _section_of(test_id: str, sections: Sequence[Failure]) -> Failure | None:
    tid = TestId.parse(test_id)
    for name in (test_id, tid.heading):
        if found := next((f for f in sections if f.name == name), None):
            return found
    base = ".".join(tid.names) if tid.names else test_id.split("[", 1)[0]
    return next((f for f in sections if f.name.split("[", 1)[0] == base), None)


def matching_failure(
    failed: Sequence[str], output: str, failure: ParsedFailure | None, report: str
) -> FailureMatch | None:
    """The first failing test whose failure is the one the report shows, with the evidence.

    In order: its final exception has the type and the message of an
    exception the report shows (its traceback's, or a ``Type: message`` in
    its text); or, its exception type agreeing with the report's where both
    are known, its message shows text the report quotes or shows in a code
    block (an assertion's values: the wrong output, or the input, the report
    shows), its parameters are the report's input, or its traceback passes
    through a function of the project that the report's traceback names. A
    type alone is not enough (``KeyError`` is everywhere), nor is a phrase
    found only in the test's source, and a failure that comes from the
    machine (:func:`fixbugs.pyenv.failures.environment_signature`) never
    matches.
    """
    if not failed:
        return None
    exceptions = _report_exceptions(failure, report)
    frames = {
        (f.path, f.function)
        for f in (failure.project_frames() if failure is not None else ())
        if f.function
    }
    reported_types = {kind for kind, _ in exceptions}
    shown = _report_texts(report)
    sections = failures("pytest", output)
    for test_id in failed:
        section = _section_of(test_id, sections)
        if section is None or environment_signature(section.text) is not None:
            continue
        final = final_exception(section.text)
        if final is not None:
            kind, message = _short(final[0]), final[1]
            for rtype, rmsg in exceptions:
                if rtype == kind and _same_message(rmsg, message):
                    return FailureMatch(test_id, f"exception {rtype}: {rmsg}")
        if final is not None and reported_types and _short(final[0]) not in reported_types:
            continue
        said = failure_message(section.text)
        if out := next((t for t in shown if t in said), None):
            return FailureMatch(test_id, f"output {out!r} in its message")
        params = test_id.partition("[")[2].removesuffix("]")
        if len(params) >= 6 and params in report:
            return FailureMatch(test_id, f"input {params!r} in its parameters")
        for frame in parse_failure(section.text).frames:
            if (frame.path, frame.function) in frames:
                return FailureMatch(test_id, f"frame {frame.path} in {frame.function}")
    return None
