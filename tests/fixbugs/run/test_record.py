"""BugRun: the record of a run goes to the queue's JSON and comes back equal, whatever it holds."""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from fixbugs.localize.evidence import FileEvidence
from fixbugs.queued.state import decode, encode
from fixbugs.run.progress import DATA_OF, NoData, ProgressEvent
from fixbugs.run.record import BugRun, Reproduction, Sbfl

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _strategy(hint: Any) -> st.SearchStrategy[Any]:
    """Values of ``hint``, every field filled (defaults too), floats finite."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return _JSON
    if hint is type(None):
        return st.none()
    if hint is ProgressEvent:  # its data is the class its kind carries
        return st.sampled_from(sorted(DATA_OF)).flatmap(
            lambda kind: st.builds(
                ProgressEvent,
                st.just(kind),
                _strategy(str),
                _strategy(float),
                _strategy(str),
                _strategy(DATA_OF[kind]),
            )
        )
    if hint in (int, float, str, bool):
        return {
            int: st.integers(-(2**40), 2**40),
            float: st.floats(allow_nan=False, allow_infinity=False),
            # lone surrogates too: a path read with surrogateescape holds them
            str: st.text(st.characters(exclude_categories=()), max_size=12),
            bool: st.booleans(),
        }[hint]
    if origin is Literal:
        return st.sampled_from(args)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return st.sampled_from(list(hint))
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(_strategy(a) for a in args))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return st.lists(_strategy(args[0]), max_size=3).map(tuple)
        return st.tuples(*(_strategy(a) for a in args))
    if origin is frozenset:
        return st.frozensets(_strategy(args[0]), max_size=3)
    if origin is list:
        return st.lists(_strategy(args[0]), max_size=3)
    if origin in (dict, Mapping):
        return st.dictionaries(_strategy(args[0]), _strategy(args[1]), max_size=3)
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        return st.builds(
            hint, **{f.name: _strategy(hints[f.name]) for f in dataclasses.fields(hint)}
        )
    if isinstance(hint, type) and issubclass(hint, BaseModel):
        hints = typing.get_type_hints(hint)
        return st.builds(hint, **{n: _strategy(hints[n]) for n in hint.model_fields})
    raise TypeError(f"no strategy for {hint!r}")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_strategy(BugRun))
def test_a_bug_run_survives_json_unchanged(run: BugRun) -> None:
    # as the queue backends keep a stage's effect: json.dumps of the encoded dict
    assert decode(json.loads(json.dumps(encode(run)))) == run


def test_the_strategy_fills_every_field() -> None:
    """The property is only as strong as its examples: nested records are reached."""
    seen: set[str] = set()

    # derandomized, so the examples (and this check) are the same on every run
    @settings(max_examples=200, deadline=None, derandomize=True, database=None)
    @given(_strategy(BugRun))
    def collect(run: BugRun) -> None:
        if run.analysis.failure is not None and run.analysis.failure.tracebacks:
            seen.add("frames")
        if run.fix.candidates:
            seen.add("repairs")
        if run.validation is not None and run.validation.candidate is not None:
            seen.add("validated candidate")
        if run.validation is not None and any(c.shape for c in run.validation.overfitting):
            seen.add("overfitting, with its shape")
        if run.validation is not None and run.validation.failed:
            seen.add("failed checks")
        if run.records:
            seen.add("call records")
        if any(not isinstance(e.data, NoData) for e in run.events):
            seen.add("events with data")
        repair = run.validation.repair if run.validation is not None else None
        if repair is not None and repair.outcomes and repair.bench is not None:
            seen.add("repair summary, with outcomes and bench figures")

    collect()
    assert seen == {
        "frames",
        "repairs",
        "validated candidate",
        "overfitting, with its shape",
        "failed checks",
        "call records",
        "events with data",
        "repair summary, with outcomes and bench figures",
    }


def test_file_names_with_lone_surrogates_survive_as_keys() -> None:
    """Two undecodable file names (read with surrogateescape) stay two keys.

    pydantic's JSON dump turns a lone surrogate in a key into U+FFFD bytes,
    which merged these two names into one (seen by the property above).
    """
    names = ("pkg/\udcff.py", "pkg/\udcfe.py")
    run = BugRun(started=0.0, sbfl=Sbfl(suspicious={n: ((1, 2, 0.5),) for n in names}))
    back = decode(json.loads(json.dumps(encode(run))))
    assert back == run and set(back.sbfl.suspicious) == set(names)


def test_the_reproductions_crash_is_file_evidence_of_the_run() -> None:
    crash = FileEvidence("a/c.py", "traceback", 1.0, "deepest project frame a/c.py:6", ((6, 6),))
    rep = Reproduction("cmd", "snippet", "confirmed", "fails", crash=(crash,))
    assert BugRun(started=0.0, reproduction=rep).file_evidence() == [crash]
    assert BugRun(started=0.0).file_evidence() == []
