"""The agent's stages as queue stages: many bugs in flight, a worker pool per stage.

::

    analysis ─► reproduction ─► root_cause ─► repair
    (model)     (sandbox)       (model)       (sandbox)

``analysis`` runs the static analysis and the model's file relevance;
``reproduction`` runs the tests and SBFL in a sandbox (without the judge's
reproduction script, whose model wait would hold the core); ``root_cause`` is the
model's judgment and the fix proposal (templates, ingredients, the model's
rewrite, ranked by naturalness: no sandbox needed); ``repair`` validates
the candidates in sandbox forks and records the report. Each is an
:class:`agentrt.pipeline.Stage` with its own
slots: a bug waiting on the model holds a model slot, never a core, and a
bug whose tests are slow holds a sandbox slot, never the model. Sandbox
stages share one gate sized to the cores, whichever of the two they are.

Each stage's effect is the bug's :class:`~fixbugs.run.record.BugRun`
after it (as JSON), recorded exactly once by the queue backend; the next stage, in
any worker process, starts from it. The report, logs and traces are a
tenant's text: ``analysis`` reads them in a process of its own, killed at a
deadline (:func:`~fixbugs.inputs.isolated.read_texts_isolated`; a hostile
report fails the bug with one line, and the worker's event loop never parses
it), and every effect carries the texts as read (:mod:`fixbugs.queued.state`),
so a later stage pays no process start and no second parse: it only reopens
the repository. A worker killed mid-stage loses only
that stage's work in progress: the message comes back after its lease and
another worker redoes the stage from the state before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from agentrt import Clock
from agentrt.llm import max_concurrency
from agentrt.metrics import MetricsRecorder
from agentrt.metrics import stage as metrics_stage
from agentrt.pipeline import Pipeline, Stage, StageContext, StageFn
from fixbugs.inputs import BugInputs
from fixbugs.inputs.bundle import TextInputs, with_repo
from fixbugs.inputs.isolated import READ_DEADLINE_S, read_texts_isolated
from fixbugs.queued.spec import BugSpec
from fixbugs.queued.state import decode, decode_texts, encode
from fixbugs.run.context import AgentOptions, Models, RunContext
from fixbugs.run.driver import (
    STAGES,
    complete_report,
    stage_finished,
    stage_started,
    start_run,
    with_journal,
)
from fixbugs.run.progress import Journal, ProgressEvent
from fixbugs.run.record import BugRun
from fixbugs.sandbox import Sandbox, Workspace, WorkspaceFactory
from fixbugs.stages.analysis import run_analysis
from fixbugs.stages.file_relevance import run_relevance
from fixbugs.stages.fix import run_fix
from fixbugs.stages.reproduce import run_reproduction
from fixbugs.stages.rootcause import run_root_cause
from fixbugs.stages.validate import run_validation

__all__ = [
    "QUEUE_STAGES",
    "Publish",
    "StagedAgent",
    "StagedConfig",
    "model_slots_for",
]

QUEUE_STAGES = ("analysis", "reproduction", "root_cause", "repair")
NO_SCRIPT_STAGED = (
    "the judge was not asked for a reproduction script: in the staged service that wait would "
    "hold a sandbox core (a single `fixbugs run` asks it)"
)
MODEL_STAGES = frozenset({"analysis", "root_cause"})

# where a bug's progress events go: (job, event as a dict)
Publish = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True, slots=True)
class StagedConfig:
    """Slots per stage: sandbox stages by cores, model stages by the endpoint.

    ``model_slots`` bounds the bugs in a model stage at once; ``None`` sizes
    it to the model endpoints' own limit (:func:`model_slots_for`). The
    model client still bounds the calls actually in flight. ``read_deadline_s``
    bounds the reading of a bug's report, logs and traces (past it the bug
    fails with one line).
    """

    sandbox_slots: int = max(1, os.cpu_count() or 1)
    model_slots: int | None = None
    lease_s: float = 60.0
    capacity: int = 16
    read_deadline_s: float = READ_DEADLINE_S  # the isolated read of a bug's texts


DEFAULT_MODEL_SLOTS = 8


def model_slots_for(models: Models | None) -> int:
    """Bugs a model stage takes at once: the endpoints' ``max_concurrency``, where set.

    A bug past the endpoint's limit would only wait inside the stage for the
    client's permit, in arrival order; left in the queue instead, the
    fairness policy decides which bug the model serves next. At least 2, so
    one bug's local work (static analysis, parsing) overlaps another's call.
    Without a configured limit (a hosted endpoint that scales), 8.
    """
    limits = []
    for client in (models.map, models.judge) if models is not None else ():
        limit = max_concurrency(client)  # the backend's, under any wrapper
        if limit is not None and limit > 0:
            limits.append(limit)
    return max(2, max(limits)) if limits else DEFAULT_MODEL_SLOTS


async def texts_from_spec(spec: BugSpec, *, deadline_s: float = READ_DEADLINE_S) -> TextInputs:
    """A bug's report, logs and traces from its queue payload, read in a process of their
    own with a deadline (:func:`~fixbugs.inputs.isolated.read_texts_isolated`)."""
    return await read_texts_isolated(
        spec.report, logs=list(spec.logs), traces=list(spec.traces), deadline_s=deadline_s
    )


class StagedAgent:
    """Builds the staged pipeline for this worker's models, options and clock.

    ``options`` is awaited once per stage run (a worker probes its test
    interpreter once and caches it); ``publish`` receives every progress
    event of every bug this worker runs; ``workspace`` opens each sandbox
    stage's copy of the repository (:mod:`fixbugs.sandbox.executor`).
    """

    def __init__(
        self,
        models: Models | None,
        options: Callable[[], Awaitable[AgentOptions]],
        *,
        clock: Clock,
        publish: Publish,
        config: StagedConfig | None = None,
        workspace: WorkspaceFactory = Sandbox.create,
    ) -> None:
        self.models = models
        self.workspace = workspace
        self.options = options
        self.clock = clock
        self.publish = publish
        self.config = config or StagedConfig()
        self._cores: asyncio.Semaphore | None = None

    def pipeline(self) -> Pipeline:
        c = self.config
        model_slots = c.model_slots or model_slots_for(self.models)

        def stage(name: str, fn: StageFn, after: tuple[str, ...]) -> Stage:
            model = name in MODEL_STAGES
            return Stage(
                name,
                fn,
                after=after,
                concurrency=model_slots if model else c.sandbox_slots,
                gate=None if model else self._core_gate,
                lease_s=c.lease_s,
                capacity=c.capacity,
            )

        return Pipeline(
            [
                stage("analysis", self._analysis, ()),
                stage("reproduction", self._reproduction, ("analysis",)),
                stage("root_cause", self._root_cause, ("reproduction",)),
                stage("repair", self._repair, ("root_cause",)),
            ],
            name="fixbugs-staged",
            capacity=c.capacity,
        )

    @contextlib.asynccontextmanager
    async def _core_gate(self) -> AsyncIterator[None]:
        """One sandbox stage per core in this process, reproduction and repair together."""
        if self._cores is None:
            self._cores = asyncio.Semaphore(self.config.sandbox_slots)
        async with self._cores:
            yield

    # -- one stage of one bug ----------------------------------------------
    async def _context(
        self,
        sctx: StageContext,
        state: BugRun | None,
        texts: TextInputs,
        *,
        validation_slots: int | None = None,
    ) -> tuple[BugInputs, RunContext]:
        """The bug's inputs (``texts`` and its repository, opened here) and this worker's
        services, its journal resumed from ``state``."""
        spec = BugSpec.from_payload(sctx.input)
        inputs = await asyncio.to_thread(with_repo, texts, spec.repo, spec.test)
        options = await self.options()
        if validation_slots is not None:
            options = replace(options, validation_slots=validation_slots)
        if spec.index_dir is not None:  # the job's own cache
            options = replace(options, index_dir=spec.index_dir)
        job = sctx.job

        def sink(ev: ProgressEvent) -> None:
            self.publish(job, ev.to_dict())

        recorder = MetricsRecorder(self.clock)
        if state is None:
            journal = Journal(self.clock, sink)
        else:
            journal = Journal(
                self.clock, sink, started=state.started, events=state.events, notes=state.notes
            )
            recorder.origin = state.started
            for r in state.records:
                recorder.add(r)
        ctx = RunContext.create(
            inputs.repo,
            models=self.models,
            options=options,
            journal=journal,
            recorder=recorder,
            spent=state.spend if state is not None else None,
        )
        if state is None:
            start_run(inputs, ctx)
        if sctx.attempt > 1:
            journal.emit("note", sctx.stage, f"{sctx.stage}: attempt {sctx.attempt}")
        return inputs, ctx

    @contextlib.asynccontextmanager
    async def _agent_stage(
        self, ctx: RunContext, name: str, walls: dict[str, float]
    ) -> AsyncIterator[None]:
        stage_started(ctx, name)
        start = self.clock.now()
        status = "error"
        try:
            with ctx.recorder.activate(), ctx.spend.activate(), metrics_stage(name):
                yield
            status = "ok"
        finally:
            walls[name] = self.clock.now() - start
            stage_finished(ctx, name, status)

    @contextlib.asynccontextmanager
    async def _workspace(self, inputs: BugInputs, ctx: RunContext) -> AsyncIterator[Workspace]:
        readonly = ctx.options.python.readonly_paths() if ctx.options.python else ()
        root = inputs.repo.root
        ws = await asyncio.to_thread(lambda: self.workspace(root, readonly_paths=readonly))
        try:
            yield ws
        finally:
            await asyncio.to_thread(ws.close)

    @staticmethod
    def _record(
        run: BugRun, ctx: RunContext, walls: dict[str, float], texts: TextInputs
    ) -> Mapping[str, Any]:
        """The stage's effect: the record, with the journal, the recorder and walls now,
        and the bug's texts for the next stage."""
        return encode(with_journal(run, ctx).with_walls(walls), texts)

    @staticmethod
    def _upstream(sctx: StageContext, stage: str) -> tuple[BugRun, TextInputs]:
        """The record and the texts ``stage`` left for this one."""
        effect = sctx.upstream[stage]
        return decode(effect), decode_texts(effect)

    async def _analysis(self, sctx: StageContext) -> Mapping[str, Any]:
        spec = BugSpec.from_payload(sctx.input)
        texts = await texts_from_spec(spec, deadline_s=self.config.read_deadline_s)
        inputs, ctx = await self._context(sctx, None, texts)
        walls: dict[str, float] = {}
        async with self._agent_stage(ctx, "analysis", walls):
            analysis = await run_analysis(inputs, ctx)
        async with self._agent_stage(ctx, "file_relevance", walls):
            relevance = await run_relevance(inputs, analysis, ctx)
        analysis = analysis.with_relevance(relevance)
        run = BugRun(started=ctx.journal.started, analysis=analysis)
        return self._record(run, ctx, walls, texts)

    async def _reproduction(self, sctx: StageContext) -> Mapping[str, Any]:
        state, texts = self._upstream(sctx, "analysis")
        inputs, ctx = await self._context(sctx, state, texts)
        # The judge's reproduction script (step ``reproduce``) is not asked here: this stage
        # holds a sandbox core, and its wait on the model would hold it too
        steps = ctx.model_steps()
        if steps.on("reproduce"):
            ctx = replace(ctx, options=replace(ctx.options, model_steps=steps.without("reproduce")))
        walls = dict(state.walls)
        async with (
            self._workspace(inputs, ctx) as ws,
            self._agent_stage(ctx, "reproduction", walls),
        ):
            rep, sbfl = await run_reproduction(inputs, state.analysis, ctx, ws)
            if steps.on("reproduce") and not rep.confirmed:
                ctx.journal.note("reproduction", NO_SCRIPT_STAGED)
        run = state.with_reproduction(rep, sbfl)
        return self._record(run, ctx, walls, texts)

    async def _root_cause(self, sctx: StageContext) -> Mapping[str, Any]:
        state, texts = self._upstream(sctx, "reproduction")
        inputs, ctx = await self._context(sctx, state, texts)
        walls = dict(state.walls)
        async with self._agent_stage(ctx, "root_cause", walls):
            run = state.with_diagnosis(await run_root_cause(inputs, state, ctx))
        # The fix proposal needs no workspace, only the model (its rewrite and
        # naturalness scores): here, its waits hold a model slot, not a core.
        async with self._agent_stage(ctx, "fix", walls):
            run = run.with_fix(await run_fix(inputs, run, ctx))
        return self._record(run, ctx, walls, texts)

    async def _repair(self, sctx: StageContext) -> Mapping[str, Any]:
        state, texts = self._upstream(sctx, "root_cause")
        # The repair holds one core of the shared gate: it validates one
        # candidate at a time, so it never takes the core another bug holds.
        inputs, ctx = await self._context(sctx, state, texts, validation_slots=1)
        walls = dict(state.walls)
        async with (
            self._workspace(inputs, ctx) as ws,
            self._agent_stage(ctx, "validation", walls),
        ):
            validation, diagnosis = await run_validation(inputs, state, ctx, ws)
        run = state.with_validation(validation, diagnosis).with_walls(walls)
        report = complete_report(inputs, run, ctx, STAGES)
        return {"report": report.to_dict()}
