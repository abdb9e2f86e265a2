"""The queue hands a bug's state on as JSON data: a stored pickle is refused, never loaded."""

from __future__ import annotations

import base64
import json
import os
import pickle
from pathlib import Path

import pytest

from fixbugs.inputs.bug_report import BugReport
from fixbugs.inputs.bundle import TextInputs
from fixbugs.inputs.traces import Span, Trace
from fixbugs.queued.state import VERSION, StateVersionError, decode, decode_texts, encode
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


def test_the_bugs_texts_travel_in_the_effect_as_read() -> None:
    """The first stage's read (report, traces) is carried on: a later stage parses nothing."""
    span = Span("s1", None, "GET", "api", 1, 2, "ERROR", "boom", {"k\ud800": "v\udfff"})
    texts = TextInputs(
        BugReport("t\ud800", "body", ("a comment",), Path("r.json"), "github"),
        (Path("logs/app.log"),),
        (Trace("t1", (span,)),),
        ("a note",),
    )
    effect = json.loads(json.dumps(encode(BugRun(started=1.0), texts)))
    assert decode_texts(effect) == texts
    assert decode(effect) == BugRun(started=1.0)
    with pytest.raises(StateVersionError, match="carries no inputs"):
        decode_texts(encode(BugRun(started=1.0)))
