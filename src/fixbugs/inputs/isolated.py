"""A job's untrusted texts read in a process of their own, with a deadline.

The service runs many tenants' jobs on one event loop. Parsing a report, a
log or a trace file is CPU work on text a tenant chose, and Python's ``re``
holds the GIL for a whole match: a thread does not keep such work from
stalling the loop, a process does. :func:`load_inputs_isolated` reads the
report, logs and traces (:func:`~fixbugs.inputs.bundle.read_texts`) in a
fresh interpreter (``python -m fixbugs.inputs.isolated``: nothing of the
service's state is in it, and no module of the service's is re-run as
``multiprocessing`` would re-run its main), started through the host tools'
one runner (:func:`~fixbugs.sandbox.hosttools.run_tool`: no shell, a short
environment), gets them back on stdout as JSON of
:class:`~fixbugs.inputs.bundle.TextInputs`, never a pickle, and kills it at
the deadline: the job then fails with one line, and no other job waits on
it. The repository is opened here, in a thread (a file walk, which
releases the GIL).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from fixbugs.errors import InputError
from fixbugs.inputs.bundle import BugInputs, TextInputs, read_texts, with_repo
from fixbugs.sandbox.hosttools import host_env, run_tool

__all__ = ["READ_DEADLINE_S", "load_inputs_isolated", "read_texts_isolated"]

READ_DEADLINE_S = 60.0  # a 5 MB report and large traces read in seconds; this is no use


class _Request(BaseModel):
    """What the reading process is asked to read (stdin, JSON)."""

    report: Path
    logs: list[Path]
    traces: list[Path]


class _Read(BaseModel):
    """What the reading process answers (stdout, JSON): the texts, or the one-line error."""

    texts: TextInputs | None = None
    error: str | None = None


async def load_inputs_isolated(
    report: Path,
    repo: Path,
    logs: Sequence[Path] = (),
    traces: Sequence[Path] = (),
    test: str | None = None,
    *,
    deadline_s: float = READ_DEADLINE_S,
) -> BugInputs:
    """:func:`~fixbugs.inputs.bundle.load_inputs`, its text parsing in a killable process.

    Past ``deadline_s`` the process is killed and an :class:`InputError`
    says so in one line; a bad input is the same InputError as in-process.
    """
    texts = await read_texts_isolated(report, logs, traces, deadline_s=deadline_s)
    return await asyncio.to_thread(with_repo, texts, repo, test)


async def read_texts_isolated(
    report: Path,
    logs: Sequence[Path] = (),
    traces: Sequence[Path] = (),
    *,
    deadline_s: float = READ_DEADLINE_S,
) -> TextInputs:
    """:func:`~fixbugs.inputs.bundle.read_texts` in a killable process (the repository
    is not opened): the staged pipeline reads them once and carries them on."""
    request = _Request(report=report, logs=list(logs), traces=list(traces))
    # the child imports this very code: the parent's import path, not whatever is installed;
    # of the service's environment it gets only the host tools' short list (no API key)
    env = host_env({"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)})
    argv = (sys.executable, "-m", "fixbugs.inputs.isolated")
    data = request.model_dump_json().encode()
    # a thread waits on the process (holding no GIL); the host tools' runner kills it at
    # the deadline (a cancelled job's reader lives on until then, at most)
    run = await asyncio.to_thread(run_tool, argv, timeout_s=deadline_s, env=env, stdin=data)
    if run.timed_out:
        raise InputError(
            f"the report took more than {deadline_s:g} s to read; "
            "shorten it (logs and traces go in files of their own)"
        )
    out = run.stdout
    if not run.ok or not out:
        last = run.stderr_text.strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(
            f"the process reading the inputs failed (exit {run.returncode}): {last[0][:300]}"
        )
    read = await asyncio.to_thread(_answered, out)
    if read.texts is None:
        raise InputError(read.error or "the inputs could not be read")
    return read.texts


def _answer(read: _Read) -> bytes:
    """The reading process's answer: json.dumps escapes a lone surrogate (a GitHub
    issue's "\\ud800" is one) that pydantic's JSON writer refuses, so the texts come
    back as they were read, as in-process."""
    return json.dumps(to_jsonable_python(read)).encode()


def _answered(out: bytes) -> _Read:
    """The answer read back: typed fields only."""
    return _Read.model_validate(json.loads(out))


def _main() -> None:
    """The reading process: a request on stdin, the answer on stdout."""
    request = _Request.model_validate_json(sys.stdin.buffer.read())
    try:
        read = _Read(texts=read_texts(request.report, request.logs, request.traces))
    except InputError as e:
        read = _Read(error=str(e))
    sys.stdout.buffer.write(_answer(read))


if __name__ == "__main__":
    _main()
