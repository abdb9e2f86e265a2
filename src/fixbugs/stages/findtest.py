"""Finding a test command when the user gave none.

In order: a test command in the report (a code block, a "steps to
reproduce" section, a ``$ pytest …`` line); a test function named in the
report's traceback (``tests/test_x.py`` frame of ``test_y`` becomes
``python -m pytest tests/test_x.py -k test_y``); else the existing test
modules of the top-ranked files are run once and a failing test whose error
matches the report is kept. When none works the reproduction says so, and
localization stands on static evidence alone.

The text-only parts (:func:`command_from_report`, :func:`command_from_frames`,
:func:`matching_failure`) are pure functions; the existing tests of a file
are :func:`fixbugs.localize.signals.module_tests`'s.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Sequence

from fixbugs.localize.traceback import ParsedFailure, is_test_path

__all__ = ["command_from_frames", "command_from_report", "matching_failure"]

_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
_TEST_CMD = re.compile(
    r"^\s*(?:[$>]\s*)?((?:python\d?(?:\.\d+)? -m (?:pytest|unittest)|pytest|py\.test|tox|nox|"
    r"make test|npm test|go test|cargo test)\b.*)$",
    re.M,
)
_STEPS = re.compile(
    r"^#+\s*(?:steps\s+to\s+reproduce|reproduc\w*|how\s+to\s+reproduce)\b.*$", re.I | re.M
)
_INLINE = re.compile(r"`((?:python\d?(?:\.\d+)? -m pytest|pytest|py\.test) [^`\n]+)`")
_FAILED_SECTION = re.compile(r"^_{3,} (?P<name>\S.*?) _{3,}$", re.M)


def command_from_report(text: str) -> str | None:
    """The first test command in a code block, a reproduce section or inline code."""
    for block in _FENCE.findall(text):
        m = _TEST_CMD.search(block)
        if m:
            return m.group(1).strip()
    steps = _STEPS.search(text)
    if steps:
        section = text[steps.end() :].split("\n#", 1)[0]
        m = _TEST_CMD.search(section)
        if m:
            return m.group(1).strip().strip("`")
    m = _INLINE.search(text)
    return m.group(1).strip() if m else None


def command_from_frames(failure: ParsedFailure | None, files: Collection[str]) -> str | None:
    """A pytest command for the test functions the report's traceback passes through."""
    if failure is None:
        return None
    ids = [t for t in failure.failing_tests if t.split("::")[0] in files]
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


def _sections(output: str) -> dict[str, str]:
    """pytest's failure sections (``____ Class.test ____``) by their heading."""
    marks = list(_FAILED_SECTION.finditer(output))
    return {
        m["name"].strip(): output[m.end() : marks[i + 1].start() if i + 1 < len(marks) else None]
        for i, m in enumerate(marks)
    }


def matching_failure(
    failed: Sequence[str], output: str, failure: ParsedFailure | None, report: str
) -> str | None:
    """The failing test id whose error matches the report's exception or message, if any."""
    if not failed:
        return None
    wants: list[str] = []
    if failure is not None:
        if failure.exception_type:
            wants.append(failure.exception_type.rsplit(".", 1)[-1])
        if failure.exception_message:
            wants.append(failure.exception_message.strip()[:80])
    wants += [q for q in re.findall(r"['\"`]([^'\"`\n]{6,80})['\"`]", report)][:10]
    wants = [w for w in wants if w]
    if not wants:
        return None
    sections = _sections(output)
    for test_id in failed:
        tail = test_id.split("::", 1)[-1].replace("::", ".").split("[", 1)[0]
        text = next((t for name, t in sections.items() if name.startswith(tail)), "")
        if any(w in text for w in wants):
            return test_id
    return None
