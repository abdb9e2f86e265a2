"""The FixBugs agent: one bug, six stages, as a dependency graph on agentrt.

::

    analysis ──► file_relevance ──┐
        └──────► reproduction ────┴─► root_cause ─► fix ─► validation

Relevance (model calls over file chunks) and reproduction (running tests in
the sandbox) need nothing of each other, so they run at once; the run's
wall-clock follows the critical path. Every stage is a graph node, so its
model and tool calls are recorded under its name and the report gives each
stage's wall time, TTFT, output tokens, attempts and failures.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from agentrt import Clock, Settings, SystemClock, load_settings
from agentrt.flow import client_for_role, retry_budget
from agentrt.graph import Graph, GraphEvent, NodeContext, NodeFinished, NodeStarted, typed_value
from fixbugs.errors import InputError
from fixbugs.inputs import BugInputs, load_inputs
from fixbugs.pyenv.overlay import needs_shim, prepare_env, shim_dir
from fixbugs.pyenv.userenv import Interpreter, TestEnv, choose_interpreter, probe_env
from fixbugs.repair.verdict import VerdictLevel
from fixbugs.run.context import AgentOptions, Models, RunContext
from fixbugs.run.driver import (
    STAGES,
    StageName,
    complete_report,
    stage_finished,
    stage_started,
    start_run,
)
from fixbugs.run.model_steps import NO_DEFAULT_STEPS, ModelSteps
from fixbugs.run.preflight import models_line, preflight
from fixbugs.run.progress import EventSink, Journal
from fixbugs.run.record import BugRun
from fixbugs.run.report import RunReport
from fixbugs.run.report_schema import ReportModel
from fixbugs.sandbox import Sandbox, Workspace, WorkspaceFactory
from fixbugs.stages.analysis import run_analysis
from fixbugs.stages.file_relevance import run_relevance
from fixbugs.stages.fix import run_fix
from fixbugs.stages.reproduce import run_reproduction
from fixbugs.stages.rootcause import run_root_cause
from fixbugs.stages.validate import run_validation

__all__ = [
    "apply_report",
    "apply_to_repo",
    "close_models",
    "env_for_interpreter",
    "interpreter_options",
    "models_from_config",
    "run_bug",
    "run_from_paths",
    "run_settings",
    "user_env",
]


async def run_bug(
    inputs: BugInputs,
    *,
    models: Models | None,
    options: AgentOptions | None = None,
    clock: Clock | None = None,
    sink: EventSink | None = None,
    workspace: WorkspaceFactory = Sandbox.create,
    until: StageName = "validation",
) -> RunReport:
    """Investigate one bug end to end; the report says plainly whether a fix validated.

    Every command of the repository runs in ``workspace``'s copies of it
    (the contained :class:`~fixbugs.sandbox.Sandbox`; a test may pass a
    plain-subprocess one, see :mod:`fixbugs.sandbox.executor`). ``until``
    stops after that stage (``fixbugs eval --localize-only`` stops after
    ``root_cause``): the stages before it run exactly as in a whole run, and
    the ones after it are reported not run.

    Each graph node returns its stage's result and the edges carry them:
    ``root_cause`` composes the :class:`~fixbugs.run.record.BugRun` from
    the analysis, the relevance and the reproduction; ``fix`` and
    ``validation`` each return it with their own result added.
    """
    clock = clock or SystemClock()
    ctx = RunContext.create(
        inputs.repo,
        models=models,
        options=options or AgentOptions(),
        journal=Journal(clock, sink or (lambda _: None)),
    )
    start_run(inputs, ctx)
    readonly = ctx.options.python.readonly_paths() if ctx.options.python else ()
    making = asyncio.ensure_future(_make_workspace(ctx, workspace, inputs.repo.root, readonly))
    try:
        return await _run_graph(inputs, ctx, making, clock, until)
    finally:
        ws = await _settled(making)
        if ws is not None:
            await asyncio.to_thread(ws.close)


async def _make_workspace(
    ctx: RunContext, workspace: WorkspaceFactory, root: Path, readonly: Sequence[Path]
) -> Workspace:
    """The sandbox's copy of the tree, made once the repository's index is built.

    The copy (every file copied, and written again as a git object for the
    diff) needs no sandbox and runs beside the analysis; the stages that run
    code wait for it. Made beside a cold index it took the cores from the
    index's parse workers: on a sympy tree (1,928 files, 2 cores) the first
    hypothesis came after about 12.0 s instead of 10.1 s (MEASUREMENTS.md). A warm
    index is read in about a second, so the copy barely waits. An index that
    fails is the analysis' error to report, not the copy's.
    """
    with contextlib.suppress(Exception):
        await asyncio.to_thread(ctx.files)
    return await asyncio.to_thread(lambda: workspace(root, readonly_paths=readonly))


async def _settled(making: asyncio.Future[Workspace]) -> Workspace | None:
    """The workspace once its making ended (None if it failed: its error is the run's,
    raised where a stage awaited it). Cancelled meanwhile, the run leaves it to be
    closed when made."""
    try:
        return await asyncio.shield(making)
    except asyncio.CancelledError:
        if not making.done():
            making.add_done_callback(_close_when_made)
            raise
        return None
    except Exception:
        return None


def _close_when_made(made: asyncio.Future[Workspace]) -> None:
    if not made.cancelled() and made.exception() is None:
        made.result().close()


async def _run_graph(
    inputs: BugInputs,
    ctx: RunContext,
    making: asyncio.Future[Workspace],
    clock: Clock,
    until: StageName,
) -> RunReport:
    """The stages as a graph (see :func:`run_bug`); ``making`` yields the workspace."""

    async def analysis(_: NodeContext) -> BugRun:
        found = await run_analysis(inputs, ctx)
        return BugRun(started=ctx.journal.started, analysis=found)

    # every node outputs a BugRun: the two branches their part of it, joined after
    async def relevance(n: NodeContext) -> BugRun:
        prior = n.input("analysis", BugRun)
        found = await run_relevance(inputs, prior.analysis, ctx)
        return prior.with_relevance(found)

    async def reproduction(n: NodeContext) -> BugRun:
        prior = n.input("analysis", BugRun)
        rep, sbfl = await run_reproduction(inputs, prior.analysis, ctx, await making)
        return prior.with_reproduction(rep, sbfl)

    async def root_cause(n: NodeContext) -> BugRun:
        run = _joined(n.inputs)
        return run.with_diagnosis(await run_root_cause(inputs, run, ctx))

    async def fix(n: NodeContext) -> BugRun:
        prior = n.input("root_cause", BugRun)
        found = await run_fix(inputs, prior, ctx, baseline=(await making).baseline)
        return prior.with_fix(found)

    async def validation(n: NodeContext) -> BugRun:
        prior = n.input("fix", BugRun)
        ws = await making
        validation, diagnosis = await run_validation(inputs, prior, ctx, ws)
        return prior.with_validation(validation, diagnosis)

    nodes: tuple[tuple[str, Callable[[NodeContext], Awaitable[object]], list[str]], ...] = (
        ("analysis", analysis, []),
        ("file_relevance", relevance, ["analysis"]),
        ("reproduction", reproduction, ["analysis"]),
        # analysis last: the critical path runs through a branch, never around it
        ("root_cause", root_cause, ["file_relevance", "reproduction", "analysis"]),
        ("fix", fix, ["root_cause"]),
        ("validation", validation, ["fix"]),
    )
    g = Graph()
    # STAGES is in dependency order, so a prefix of it is a whole graph
    for name, node, needs in nodes[: STAGES.index(until) + 1]:
        g.add(name, node, inputs=needs)

    def on_event(ev: GraphEvent) -> None:
        if isinstance(ev, NodeStarted):
            stage_started(ctx, ev.node)
        elif isinstance(ev, NodeFinished):
            stage_finished(ctx, ev.node, ev.status)

    with ctx.spend.activate():  # every model call of the run is admitted and charged
        result = await g.run(clock=clock, recorder=ctx.recorder, on_event=on_event)
    failed = making.exception() if making.done() and not making.cancelled() else None
    if failed is not None:  # a workspace that could not be made, though no stage needed it
        raise failed
    if until in ("root_cause", "fix", "validation"):
        run = result.output(until, BugRun)
    else:  # up to the reproduction: the analysis' record and the branches' results
        run = _joined(result.outputs)
    walls = {t.node: t.duration_s for t in result.report.timings}
    return complete_report(inputs, run.with_walls(walls), ctx, result.report.critical_path)


def _joined(outputs: Mapping[str, object]) -> BugRun:
    """The analysis' record, with the relevance and reproduction that ran beside it (if run)."""
    run = typed_value(outputs, "analysis", BugRun)
    if "file_relevance" in outputs:
        run = run.model_copy(
            update={"analysis": typed_value(outputs, "file_relevance", BugRun).analysis}
        )
    if "reproduction" in outputs:
        reproduced = typed_value(outputs, "reproduction", BugRun)
        run = run.model_copy(
            update={"reproduction": reproduced.reproduction, "sbfl": reproduced.sbfl}
        )
    return run


def run_settings(config: Path | None, env: Mapping[str, str] | None = None) -> Settings:
    """A run's settings: ``config``, the environment, and endpoints found as users
    configure them (provider keys, ``OPENAI_BASE_URL``, a local server on its usual
    port: :mod:`agentrt._discovery`). Read once per run: the local probe is a request."""
    return load_settings(config, env, probe_local=True)


def models_from_config(
    config: Path | None,
    env: Mapping[str, str] | None = None,
    *,
    settings: Settings | None = None,
) -> Models:
    """The run's two roles' clients, from ``settings`` (else read from ``config`` and
    ``env``, default: the process's, with discovery: :func:`run_settings`)."""
    settings = settings or run_settings(config, env)
    budget = retry_budget(settings)  # one retry budget for this run's clients
    return Models(
        map=client_for_role(settings, "map", budget=budget),
        judge=client_for_role(settings, "judge", budget=budget),
        judge_trust=settings.trust_for("judge"),
        map_trust=settings.trust_for("map"),
    )


def default_steps(config: Path | None, settings: Settings | None = None) -> ModelSteps:
    """The model steps a run on ``config``'s endpoints takes unless told (their trust)."""
    settings = settings or run_settings(config)
    return ModelSteps.by_trust(settings.trust_for("map"), settings.trust_for("judge"))


async def preflight_steps(config: Path | None, steps: ModelSteps | None) -> None:
    """One request per endpoint the runs will call (exit 2 when one cannot serve); none when
    no step would call a model, as :func:`run_from_paths` then loads none (the embedded model
    is an extra that need not be installed)."""
    settings = await asyncio.to_thread(run_settings, config)
    if (steps or default_steps(config, settings)).enabled:
        await preflight(settings, ("map", "judge"))


async def checked_models(config: Path | None, settings: Settings | None = None) -> Models:
    """Models for the run, after one preflight request per endpoint (exit 2 when one fails)."""
    if settings is None:
        settings = await asyncio.to_thread(run_settings, config)
    await preflight(settings, ("map", "judge"))
    return models_from_config(config, settings=settings)


def env_for_interpreter(interp: Interpreter, *, notes: list[str] | None = None) -> TestEnv:
    """Probe ``interp`` and complete it: coverage overlay where missing, ``python`` shim.

    A repository venv is probed in the sandbox (see :func:`fixbugs.pyenv.userenv.probe_env`).
    """
    probed: list[str] = []
    env, extra = prepare_env(probe_env(interp, notes=probed))
    if needs_shim(env.python):
        env = replace(env, shim=shim_dir(env.python))
    if notes is not None:
        notes.extend([*probed, *extra])
    return env


def user_env(
    repo: Path,
    python: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    notes: list[str] | None = None,
) -> TestEnv:
    """The user's test environment (see :mod:`fixbugs.pyenv.userenv`), ready for the sandbox."""
    return env_for_interpreter(
        choose_interpreter(repo, python=python, environ=environ), notes=notes
    )


async def run_from_paths(
    *,
    report: Path,
    repo: Path,
    logs: Sequence[Path] = (),
    traces: Sequence[Path] = (),
    test: str | None = None,
    screenshots: Sequence[Path] = (),
    config: Path | None = None,
    use_model: bool = True,
    python: Path | None = None,
    repair_budget_s: float | None = None,
    repair_candidates: int | None = None,
    repair_bench: bool = False,
    checks_bench: bool = False,
    test_timeout_s: float | None = None,
    suite_timeout_s: float | None = None,
    model_steps: ModelSteps | None = None,
    max_cost_usd: float | None = None,
    max_model_tokens: int | None = None,
    on_event: EventSink | None = None,
    on_models: Callable[[str], None] | None = None,
) -> RunReport:
    """The CLI's entry: validate inputs, build models from config, run the agent.

    ``on_models`` gets the run's models line (which model serves which role,
    or that none does and what the run does instead; :func:`models_line`)
    as soon as it is known, before the preflight: the CLI's first line. The
    report's notes carry it too.
    """
    inputs = await asyncio.to_thread(
        load_inputs, report, repo, logs=logs, traces=traces, test=test, screenshots=screenshots
    )
    notes: list[str] = []
    settings = await asyncio.to_thread(run_settings, config) if use_model else None
    steps = model_steps
    if settings is not None and steps is None:
        steps = default_steps(config, settings)
        if not steps.enabled:
            # no step would call a model: none is loaded (the embedded one takes seconds)
            use_model = False
            notes.append(NO_DEFAULT_STEPS)
    line = models_line(settings, steps)
    if on_models is not None:
        on_models(line)
    # exit 2 before any work
    models = await checked_models(config, settings) if use_model and settings else None
    try:
        options = await asyncio.to_thread(lambda: interpreter_options(repo, python, notes))
    except BaseException:
        await close_models(models)
        raise
    options = replace(
        options,
        models_line=line,
        use_model=use_model,
        model_steps=model_steps,
        max_cost_usd=max_cost_usd,
        max_model_tokens=max_model_tokens,
    )
    if repair_budget_s is not None:
        options = replace(options, fix_budget_s=repair_budget_s)
    if repair_candidates is not None:
        options = replace(options, max_candidates=repair_candidates)
    if repair_bench:
        options = replace(options, repair_bench=True)
    if checks_bench:
        options = replace(options, checks_bench=True)
    if test_timeout_s is not None:
        options = replace(options, test_timeout_s=test_timeout_s)
    if suite_timeout_s is not None:
        options = replace(options, suite_timeout_s=suite_timeout_s)
    inputs = replace(inputs, notes=(*inputs.notes, *notes))
    try:
        return await run_bug(inputs, models=models, options=options, sink=on_event)
    finally:
        await close_models(models)


def interpreter_options(repo: Path, python: Path | None, notes: list[str]) -> AgentOptions:
    """Options carrying the user's interpreter; with none found (and none named), the
    run goes on and its reproduction says "could not run" (a bad ``--python`` is exit 2)."""
    try:
        env = user_env(repo, python, notes=notes)
    except InputError as exc:
        if python is not None:
            raise
        notes.append(str(exc))
        return AgentOptions(no_python=str(exc).split(";")[0])
    return AgentOptions.for_env(env)


async def close_models(models: Models | None) -> None:
    if models is not None:
        await models.map.aclose()
        if models.judge is not models.map:
            await models.judge.aclose()


def apply_report(report: ReportModel, repo: Path, *, force: bool = False) -> str:
    """``fixbugs run --apply``: the report's fix applied when its verdict allows (one line).

    Only a ``validated`` fix is applied; one that only ``passes_tests`` (a
    check does not hold) with ``force`` alone, and said so.
    """
    from fixbugs.run.handoff import held_back

    if report.verdict == VerdictLevel.NO_FIX or not report.patch:
        return apply_to_repo(None, repo)
    held = held_back(report, force=force, refused="not applied", verb="applies")
    if held is not None:
        return held
    message = apply_to_repo(report.patch, repo)
    if report.verdict != VerdictLevel.VALIDATED:
        message = message.replace("validated patch", "patch that is not validated (--force)")
    return message


def apply_to_repo(patch: str | None, repo: Path) -> str:
    """Apply a report's patch to the user's work tree (only when asked; see :func:`apply_report`).

    Through :func:`fixbugs.inputs.hostgit.apply_diff`: git runs with none of the
    repository's configuration, so its filters and hooks do not run.
    """
    if not patch:
        return "no validated patch: the repository was not changed"
    from fixbugs.inputs.hostgit import apply_diff

    outcome = apply_diff(patch, repo)
    if not outcome.applied:
        return f"the validated patch did not apply to {repo}: {outcome.message[:200]}"
    return f"validated patch applied to {repo}"
