"""The queue hands a bug's state on as JSON data: a stored pickle is refused, never loaded."""

from __future__ import annotations

import base64
import os
import pickle
from pathlib import Path

import pytest

from fixbugs.queued.state import VERSION, StateVersionError, decode, encode
from fixbugs.run.record import BugRun


class _Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("key", ["state", "run"])
def test_a_pickle_in_the_queue_store_runs_nothing(tmp_path: Path, key: str) -> None:
    """Whoever writes the queue store cannot make a worker run code by decoding its state."""
    marker = tmp_path / "pwned"
    blob = base64.b64encode(pickle.dumps(_Payload(marker))).decode("ascii")
    for version in (1, VERSION):
        with pytest.raises(StateVersionError):
            decode({"version": version, key: blob})
    assert not marker.exists()


def test_the_effect_is_plain_json_data() -> None:
    effect = encode(BugRun(started=3.0, notes=("a note",)))
    assert effect["version"] == VERSION
    assert effect["run"]["notes"] == ["a note"]
    assert decode(effect) == BugRun(started=3.0, notes=("a note",))


def test_a_record_of_another_shape_is_refused_plainly() -> None:
    with pytest.raises(StateVersionError, match="does not match"):
        decode({"version": VERSION, "run": {"started": 1.0, "unknown": 1}})
    with pytest.raises(StateVersionError, match="version 1"):
        decode({"version": 1, "run": {"started": 1.0}})
