"""Which failures of a test run the machine caused, not the code.

A test that fails is evidence about the code only when the code made it
fail. Some failures come from where the test ran instead: a module missing
from the environment, a user without a passwd entry or home, no network, a
write refused outside the copy. :func:`environment_signature` names such a
failure from its final exception; :func:`fixbugs.pyenv.testverdict.classify_run`
turns a run whose every failure has one into "could not run", never a
reproduction, and :func:`fixbugs.stages.findtest.matching_failure` never
keeps such a test. This module is the one place that says what such a
signature is.

The text itself is read by the one reader of a test run, and its names are
imported from there: the failing tests' sections
(:func:`fixbugs.pyenv.testoutput.failures`), what a failure says
(:func:`fixbugs.pyenv.testoutput.failure_message`), the excerpt the repair's
hints read (:func:`fixbugs.pyenv.testoutput.failure_excerpt`), and the
exception a section ends with (:func:`fixbugs.pyenv.raised.final_exception`),
which is what the judgment here reads.
"""

from __future__ import annotations

import re

from fixbugs.pyenv.raised import final_exception

__all__ = ["environment_signature"]

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
