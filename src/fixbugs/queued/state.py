"""A bug's state between queue stages: its :class:`~fixbugs.run.record.BugRun`, as JSON.

The staged driver runs each stage of a bug in whatever worker process
claims it, possibly on another machine, so everything a later stage reads
travels in the stage's recorded effect (the queue backend stores it
exactly once per bug and stage): the record of the stages so far, with the
run's events, notes and calls, and the bug's untrusted texts as the first
stage read them (:class:`~fixbugs.inputs.bundle.TextInputs`: the report,
logs and traces, parsed once in a killable process; a later stage reopens
only the repository). :func:`encode` and :func:`decode` turn the record
into the effect's JSON and back, :func:`decode_texts` the texts.

The encoding is the record's own JSON (its pydantic dump as plain JSON
types), with a version tag so a worker of another version refuses it
plainly. Decoding builds only the
record's typed fields: nothing in the queue store can name code to run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python

from fixbugs.inputs.bundle import TextInputs
from fixbugs.run.record import RECORD_VERSION, BugRun

__all__ = ["VERSION", "StateVersionError", "decode", "decode_texts", "encode"]

VERSION = RECORD_VERSION


class StateVersionError(Exception):
    """The stored state was written by an incompatible version of the worker."""


_TEXTS = TypeAdapter(TextInputs)


def encode(state: BugRun, texts: TextInputs | None = None) -> dict[str, Any]:
    """The JSON-able form kept in a stage's effect.

    Built from the record's Python dump rather than pydantic's JSON dump:
    that one replaces a lone surrogate in a mapping's *key* (a file name
    read with ``surrogateescape``) by U+FFFD bytes, so two such names could
    merge and the record would not come back equal. ``json.dumps`` escapes
    surrogates, and :func:`decode` reads them back unchanged.
    """
    effect = {"version": VERSION, "run": _jsonable(state.model_dump(mode="python"))}
    if texts is not None:
        effect["texts"] = _jsonable(_TEXTS.dump_python(texts, mode="python"))
    return effect


def _jsonable(value: Any) -> Any:
    """``value`` (a pydantic Python dump) as plain JSON types, keys as they were."""
    if isinstance(value, Mapping):
        return {k if isinstance(k, str) else _key(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return to_jsonable_python(value)  # paths, enums and the like, as pydantic writes them


def _key(key: Any) -> str:
    out = to_jsonable_python(key)
    return out if isinstance(out, str) else json.dumps(out)


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


def decode_texts(data: Mapping[str, Any]) -> TextInputs:
    """The bug's texts in a stage's effect, as the first stage read them; an effect
    without them (or of another shape) is refused like a record of another version."""
    if data.get("version") != VERSION or "texts" not in data:
        raise StateVersionError(
            f"bug state of version {data.get('version')!r} carries no inputs; "
            f"this worker reads {VERSION} with them"
        )
    try:
        return _TEXTS.validate_python(data["texts"])
    except ValidationError as e:
        raise StateVersionError(f"bug inputs do not match this worker's: {e}") from None
