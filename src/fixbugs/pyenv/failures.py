"""The failures a test run printed, one per failing test, and which the machine caused.

A test that fails is evidence about the code only when the code made it
fail. Some failures come from where the test ran instead: a module missing
from the environment, a user without a passwd entry or home, no network, a
write refused outside the copy. :func:`environment_signature` names such a
failure from its final exception; :func:`fixbugs.pyenv.testverdict.classify_run`
turns a run whose every failure has one into "could not run", never a
reproduction, and :func:`fixbugs.stages.findtest.matching_failure` never
keeps such a test. This module is the one place that says what such a
signature is.

:func:`failures` splits a run's output into its failing tests' sections
(pytest's ``____ test ____`` blocks, unittest's ``FAIL:``/``ERROR:`` blocks);
:func:`final_exception` reads the exception a section ends with and
:func:`failure_message` what it says; :func:`failure_excerpt` keeps those
sections, and not the warnings or summary around them, for the repair's
hints. All are pure functions of text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Failure",
    "collect_error",
    "environment_signature",
    "failure_excerpt",
    "failure_message",
    "failures",
    "final_exception",
    "summary_ids",
]

Runner = Literal["pytest", "unittest", "other"]

_PYTEST_SECTION = re.compile(r"^_{3,} (?P<name>\S.*?) _{3,}$", re.M)
_PYTEST_END = re.compile(r"^={5,}", re.M)
_UNITTEST_SECTION = re.compile(r"^={20,}\n(?P<kind>FAIL|ERROR): (?P<name>[^\n]+)\n-{20,}\n", re.M)
_UNITTEST_END = re.compile(r"^(?:={20,}|-{20,})$", re.M)
_SUMMARY = re.compile(r"^(?:FAILED|ERROR) (?P<id>\S+)(?: - (?P<msg>.+))?$", re.M)
_COLLECT = re.compile(r"^_+ ERROR collecting (\S+) _+$", re.M)
_CAPTURED = re.compile(r"^-{3,} Captured ", re.M)
_SETUP = re.compile(r"^ERROR at (?:setup|teardown) of ")

_SUFFIX = r"(?:Error|Exception|Exit|Interrupt|Failure|error|NotFound|Conflict)"
_TYPE = rf"(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*{_SUFFIX})"
_E_EXC = re.compile(rf"^E\s+{_TYPE}(?::\s?(?P<msg>.*))?$")
_PLAIN_EXC = re.compile(rf"^{_TYPE}(?::\s?(?P<msg>.*))?$")
_LOCATION = re.compile(rf"^\S+\.py:\d+: {_TYPE}$")

_NO_USER = re.compile(
    r"getpwuid\(\): uid not found|getpwnam\(\): name not found|getgrgid\(\): gid not found|"
    r"[Cc]ould not determine home directory|No username set in the environment"
)
_NO_NAME = re.compile(
    r"Temporary failure in name resolution|Name or service not known|"
    r"nodename nor servname provided|No address associated with hostname|"
    r"getaddrinfo failed|Could not resolve host|Failed to resolve|\[Errno -[235]\]"
)
_UNREACHABLE = re.compile(r"Network is unreachable|No route to host|\[Errno 101\]")
_REFUSED = re.compile(r"Connection refused|\[Errno 111\]")
_HOSTS = re.compile(
    r"host='(?P<a>[^']+)'|\(\s*'(?P<b>[^']+)',\s*\d+\s*\)|://(?P<c>\[[^\]]+\]|[^/:'\"\s)]+)"
)
_LOOPBACK = re.compile(r"^(?:127\.\d+\.\d+\.\d+|localhost|::1|\[::1\]|0\.0\.0\.0)$", re.I)
_DENIED = re.compile(
    r"\[Errno (?:1|13|30)\] (?:Operation not permitted|Permission denied|Read-only file system)"
    r": '(?P<path>[^']+)'"
)
# where a sandboxed test may write besides its copy (private tmpfs folders)
_WRITABLE = ("/tmp/", "/var/tmp/", "/dev/shm/")
_IMPORT_TYPES = frozenset({"ImportError", "ModuleNotFoundError"})
# the installed metadata of a distribution (pkg_resources, importlib.metadata): the project
# or a package it needs is not installed in the interpreter the run used
_DISTRIBUTION_TYPES = frozenset(
    {"DistributionNotFound", "PackageNotFoundError", "VersionConflict", "ContextualVersionConflict"}
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


def summary_ids(output: str) -> frozenset[str]:
    """The test ids pytest's short summary names ``FAILED`` or ``ERROR`` (a failing fixture)."""
    return frozenset(m["id"] for m in _SUMMARY.finditer(output))


def collect_error(output: str) -> str | None:
    """The first ``E   …`` line of pytest's first collection error, or None when none."""
    m = _COLLECT.search(output)
    if m is None:
        return None
    for line in output[m.end() :].splitlines():
        if line.startswith("E   "):
            return line[4:].strip()[:200]
    return "error while collecting"


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


def _pytest_sections(output: str) -> tuple[Failure, ...]:
    marks = list(_PYTEST_SECTION.finditer(output))
    out: list[Failure] = []
    for i, m in enumerate(marks):
        if m["name"].startswith(("ERROR collecting", "warnings summary")):
            continue
        stop = marks[i + 1].start() if i + 1 < len(marks) else len(output)
        end = _PYTEST_END.search(output, m.end(), stop)
        body = output[m.end() : end.start() if end else stop]
        out.append(Failure(_SETUP.sub("", m["name"].strip()), body))
    return tuple(out)


def _unittest_sections(output: str) -> tuple[Failure, ...]:
    out: list[Failure] = []
    for m in _UNITTEST_SECTION.finditer(output):
        end = _UNITTEST_END.search(output, m.end())
        out.append(Failure(m["name"].strip(), output[m.end() : end.start() if end else None]))
    return tuple(out)


def _traceback_lines(text: str) -> list[str]:
    """``text`` up to its captured output (``--- Captured stdout call ---``)."""
    captured = _CAPTURED.search(text)
    return text[: captured.start() if captured else None].splitlines()


def failure_message(text: str) -> str:
    """What a failure says: pytest's ``E`` lines (an assertion's values, its full diff
    under ``-v``), else its final exception's message; "" when it shows none."""
    e_lines = [line[1:].strip() for line in _traceback_lines(text) if line.startswith("E ")]
    if e_lines:
        return "\n".join(e_lines)
    final = final_exception(text)
    return final[1] if final is not None else ""


def final_exception(text: str) -> tuple[str, str] | None:
    """(type, message) of the exception ``text`` ends with, or None when it shows none.

    pytest's ``E`` lines come first (the last one is the end of the chain;
    the message of a bare ``assert`` is its ``E`` lines, its type the
    location line's); else the last unindented ``Type: message`` line, as
    CPython prints it. Captured output after the traceback is not read.
    """
    lines = _traceback_lines(text)
    e_lines = [m for line in lines if (m := _E_EXC.match(line))]
    if e_lines:
        last = e_lines[-1]
        return last["type"], (last["msg"] or "").strip()
    location = [m for line in lines if (m := _LOCATION.match(line))]
    if location:
        message = " ".join(line[1:].strip() for line in lines if line.startswith("E "))
        return location[-1]["type"], message
    plain = [m for line in lines if (m := _PLAIN_EXC.match(line))]
    if plain:
        return plain[-1]["type"], (plain[-1]["msg"] or "").strip()
    return None


def environment_signature(text: str) -> str | None:
    """Why a failure comes from the machine, not the code, in one line; None if it does not.

    It looks only at the final exception: an import error, a distribution whose
    installed metadata is missing or in conflict, a missing user or
    home, no name resolution or no route (the sandbox has no network but its
    loopback), a connection refused by a host other than loopback, and a
    permission error on an absolute path outside the private temp folders
    (the copy's own paths are relative in what the reproduction reads).
    """
    final = final_exception(text)
    if final is None:
        return None
    kind, message = final
    line = f"{kind}: {message}" if message else kind
    said = line if len(line) <= 160 else line[:157] + "..."
    short = kind.rsplit(".", 1)[-1]
    if _NO_USER.search(line):
        return f"no user or home for the test's uid ({said})"
    if short in _IMPORT_TYPES:
        return f"a module the tests need is missing ({said})"
    if short in _DISTRIBUTION_TYPES:
        return f"the project or a package it needs is not installed ({said})"
    if _NO_NAME.search(line) or _UNREACHABLE.search(line):
        return f"no network ({said})"
    if _REFUSED.search(line):
        hosts = [next(h for h in m.groups() if h) for m in _HOSTS.finditer(line)]
        if any(not _LOOPBACK.match(h) for h in hosts):
            return f"no network ({said})"
    denied = _DENIED.search(line)
    if denied and _outside(denied["path"]):
        return f"a permission refused outside the copy ({said})"
    return None


def _outside(path: str) -> bool:
    return path.startswith("/") and not path.startswith(_WRITABLE)
