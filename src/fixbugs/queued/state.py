"""A bug's state between queue stages: its :class:`~fixbugs.run.record.BugRun`, as JSON.

The staged driver runs each stage of a bug in whatever worker process
claims it, possibly on another machine, so everything a later stage reads
from the :class:`~fixbugs.run.context.RunContext` travels in the stage's
recorded effect (the queue backend stores it exactly once per bug and
stage). :func:`~fixbugs.run.record.record_of` and
:func:`~fixbugs.run.record.restore_into` move the record out of and back
into a fresh context; :func:`encode` and :func:`decode` turn it into the
effect's JSON and back.

The encoding is the record's own JSON (pydantic), with a version tag so a
worker of another version refuses it plainly. Decoding builds only the
record's typed fields: nothing in the queue store can name code to run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from fixbugs.run.record import RECORD_VERSION, BugRun

__all__ = ["VERSION", "StateVersionError", "decode", "encode"]

VERSION = RECORD_VERSION


class StateVersionError(Exception):
    """The stored state was written by an incompatible version of the worker."""


def encode(state: BugRun) -> dict[str, Any]:
    """The JSON-able form kept in a stage's effect."""
    return {"version": VERSION, "run": state.model_dump(mode="json")}


def decode(data: Mapping[str, Any]) -> BugRun:
    """The record in a stage's effect; a record of another version or shape is refused."""
    if data.get("version") != VERSION:
        raise StateVersionError(
            f"bug state of version {data.get('version')!r}; this worker reads {VERSION}"
        )
    try:
        return BugRun.model_validate(data.get("run"))
    except ValidationError as e:
        raise StateVersionError(f"bug state does not match this worker's record: {e}") from None
