"""A bug's state between queue stages: what one stage hands the next.

The staged driver runs each stage of a bug in whatever worker process
claims it, possibly on another machine, so everything a later stage reads
from the :class:`~fixbugs.run.context.RunContext` travels in the stage's
recorded effect (the queue backend stores it exactly once per bug and
stage). :class:`BugState` names those fields; :func:`snapshot` and
:func:`restore` move them out of and back into a fresh context.

The encoding is pickle (the fields are the agent's own frozen dataclasses,
too many to give each a JSON schema now), base64 in the JSON effect, with a
version tag so a worker of another version refuses it plainly. Only workers
that trust the queue store may decode it — the same trust they already
place in it for the paths of each bug's files.
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentrt.metrics import CallRecord
from fixbugs.localize.evidence import Evidence as FileEvidence
from fixbugs.run.context import RunContext
from fixbugs.run.progress import ProgressEvent

__all__ = ["VERSION", "BugState", "decode", "encode", "restore", "snapshot"]

VERSION = 1


class StateVersionError(Exception):
    """The stored state was written by an incompatible version of the worker."""


@dataclass(frozen=True, slots=True)
class BugState:
    """Everything later stages read, after some stage of one bug."""

    started: float
    events: tuple[ProgressEvent, ...] = ()
    notes: tuple[str, ...] = ()
    evidence: tuple[Any, ...] = ()  # fixbugs.run.context.Evidence
    log_digest: str = ""
    failure: Any = None  # ParsedFailure | None
    static_ranking: tuple[Any, ...] = ()  # RankedFile
    ranked: tuple[Any, ...] = ()
    first_hypothesis_s: float | None = None
    reproduction: Any = None  # Reproduction | None
    suspicious: Mapping[str, list[tuple[int, int, float]]] = field(default_factory=dict)
    root_cause: Any = None  # RootCause | None
    regions: tuple[Any, ...] = ()  # Region
    candidates: tuple[Any, ...] = ()  # fixbugs.run.context.Candidate
    validation: Any = None  # Validation | None
    repair_candidates: tuple[Any, ...] = ()
    repair_run: Any = None
    suite_baseline: Mapping[str, str] | None = None
    static: tuple[FileEvidence, ...] = ()  # analysis' evidence
    relevance: tuple[FileEvidence, ...] = ()  # the model's file relevance
    sbfl: tuple[FileEvidence, ...] = ()  # SBFL's, from reproduction
    records: tuple[CallRecord, ...] = ()  # model and tool calls so far
    walls: Mapping[str, float] = field(default_factory=dict)  # agent stage -> seconds


def snapshot(
    ctx: RunContext,
    *,
    static: Sequence[FileEvidence] = (),
    relevance: Sequence[FileEvidence] = (),
    sbfl: Sequence[FileEvidence] = (),
    walls: Mapping[str, float] | None = None,
) -> BugState:
    return BugState(
        started=ctx.started,
        events=tuple(ctx.events),
        notes=tuple(ctx.notes),
        evidence=tuple(ctx.evidence),
        log_digest=ctx.log_digest,
        failure=ctx.failure,
        static_ranking=tuple(ctx.static_ranking),
        ranked=tuple(ctx.ranked),
        first_hypothesis_s=ctx.first_hypothesis_s,
        reproduction=ctx.reproduction,
        suspicious=dict(ctx.suspicious),
        root_cause=ctx.root_cause,
        regions=tuple(ctx.regions),
        candidates=tuple(ctx.candidates),
        validation=ctx.validation,
        repair_candidates=tuple(ctx.repair_candidates),
        repair_run=ctx.repair_run,
        suite_baseline=dict(ctx.suite_baseline) if ctx.suite_baseline is not None else None,
        static=tuple(static),
        relevance=tuple(relevance),
        sbfl=tuple(sbfl),
        records=tuple(ctx.recorder.records),
        walls=dict(walls or {}),
    )


def restore(state: BugState, ctx: RunContext) -> None:
    """Put ``state`` into a fresh context (same inputs, this worker's models and sandbox)."""
    ctx.started = state.started
    ctx.events = list(state.events)
    ctx.notes = list(state.notes)
    ctx.evidence = list(state.evidence)
    ctx.log_digest = state.log_digest
    ctx.failure = state.failure
    ctx.static_ranking = list(state.static_ranking)
    ctx.ranked = list(state.ranked)
    ctx.first_hypothesis_s = state.first_hypothesis_s
    ctx.reproduction = state.reproduction
    ctx.suspicious = {k: list(v) for k, v in state.suspicious.items()}
    ctx.root_cause = state.root_cause
    ctx.regions = list(state.regions)
    ctx.candidates = list(state.candidates)
    ctx.validation = state.validation
    ctx.repair_candidates = list(state.repair_candidates)
    ctx.repair_run = state.repair_run
    ctx.suite_baseline = dict(state.suite_baseline) if state.suite_baseline is not None else None
    ctx.recorder.origin = state.started
    for r in state.records:
        ctx.recorder.add(r)


def encode(state: BugState) -> dict[str, Any]:
    """The JSON-able form kept in a stage's effect."""
    blob = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    return {"version": VERSION, "state": base64.b64encode(blob).decode("ascii")}


def decode(data: Mapping[str, Any]) -> BugState:
    if data.get("version") != VERSION:
        raise StateVersionError(
            f"bug state of version {data.get('version')!r}; this worker reads {VERSION}"
        )
    state = pickle.loads(base64.b64decode(data["state"]))  # the queue store is trusted
    if not isinstance(state, BugState):
        raise StateVersionError(f"bug state decodes to {type(state).__name__}")
    return state
