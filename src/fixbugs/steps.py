"""The bodies of the agent's stages, as functions of a :class:`RunContext`.

Two drivers call them: :func:`fixbugs.agent.run_bug` (one bug, the stages as
a dependency graph in one process) and :mod:`fixbugs.staged` (many bugs,
the stages as queue stages with their own worker pools, the context saved
between them). Keeping the bodies here means a stage does the same thing
whichever driver runs it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from fixbugs.context import RunContext
from fixbugs.localize.evidence import Evidence as FileEvidence
from fixbugs.localize.locate import RELEVANCE, relevance_evidence
from fixbugs.localize.process import CommandRun
from fixbugs.localize.rank import rank_files
from fixbugs.localize.sbfl import run_sbfl, sbfl_evidence, suspicious_ranges
from fixbugs.localize.traceback import ParsedFailure
from fixbugs.preflight import model_failures
from fixbugs.report import RunReport, build_report
from fixbugs.stages.analysis import analyze
from fixbugs.stages.fix import propose_fixes
from fixbugs.stages.reproduce import reproduce
from fixbugs.stages.rootcause import root_cause
from fixbugs.stages.validate import validate_candidates
from fixbugs.testrun import parse_test_command, unittest_module

__all__ = [
    "complete_report",
    "run_analysis",
    "run_fix",
    "run_relevance",
    "run_reproduction",
    "run_root_cause",
    "run_validation",
    "start_run",
]


def start_run(ctx: RunContext) -> None:
    """The run's first events: what is investigated, with which interpreter."""
    inputs = ctx.inputs
    ctx.emit("run_started", "run", f"investigating: {inputs.report.title}")
    if ctx.options.python is not None:
        env = ctx.options.python
        ctx.emit("note", "reproduction", f"tests run with {env.describe()}", **env.to_dict())
        if env.pytest is None:
            ctx.note(
                "reproduction",
                f"pytest is not installed in the project's environment ({env.python})",
            )
    for n in inputs.notes:
        ctx.note("analysis", n)


def _ranked_event(ctx: RunContext, stage: str, what: str) -> None:
    files = [
        {"path": r.path, "score": round(r.score, 3), "reasons": list(r.reasons)}
        for r in ctx.ranked[:10]
    ]
    ctx.emit("ranked_files", stage, what, files=files)


async def run_analysis(ctx: RunContext) -> list[FileEvidence]:
    """Static signals (report, traceback, logs, traces): the first ranking."""
    static = list(await analyze(ctx))
    ctx.ranked = rank_files(static)
    _ranked_event(ctx, "analysis", "ranked files (static signals)")
    return static


async def run_relevance(ctx: RunContext, static: list[FileEvidence]) -> list[FileEvidence]:
    """Model relevance over the top candidates' file chunks (scatter-gather)."""
    if ctx.models is None or not ctx.options.use_model:
        return []
    res = await relevance_evidence(  # the same call and settings as eval's localize()
        ctx.models.map,
        ctx.inputs.report.title + "\n" + ctx.inputs.report.body,
        ctx.failure or ParsedFailure(),
        static,
        ctx.files(),
        settings=replace(RELEVANCE, top_n=ctx.options.relevance_top_n),
        clock=ctx.clock,
        stage="file_relevance",
    )
    for n in res.notes:
        ctx.note("file_relevance", n)
    return list(res.evidence)


async def run_reproduction(ctx: RunContext) -> list[FileEvidence]:
    """Reproduce in ``ctx.sandbox``, then SBFL evidence when the failure was seen."""
    ctx.reproduction = await reproduce(ctx)
    return await _sbfl(ctx)


async def _sbfl(ctx: RunContext) -> list[FileEvidence]:
    """Ochiai over per-test coverage, in a fork of the sandbox."""
    rep = ctx.reproduction
    if rep is None or not rep.confirmed or rep.command is None or not ctx.options.use_sbfl:
        return []
    parsed = parse_test_command(rep.command)
    test_files = list(parsed.files)
    if parsed.runner == "unittest":
        mods = [unittest_module(t) for t in parsed.targets]
        test_files = [m if m.endswith(".py") else m.replace(".", "/") + ".py" for m in mods]
    test_files = [t for t in test_files if t in ctx.files()]
    if not test_files:
        return []
    env = ctx.options.python
    if env is not None and not env.has_coverage:
        ctx.note("reproduction", "SBFL skipped: coverage.py is not available for the tests' Python")
        return []
    python = env.python if env is not None else Path("python")
    fork = await asyncio.to_thread(ctx.sandbox.fork)
    try:

        async def runner(
            argv: Sequence[str], root: Path, *, timeout_s: float = 180.0
        ) -> CommandRun:
            with ctx.recorder.tool_call("tests under coverage"):
                r = await fork.run(list(argv), timeout_s=timeout_s, env=ctx.options.test_env)
            return CommandRun(tuple(argv), r.returncode, r.stdout + r.stderr, r.timed_out)

        result = await run_sbfl(
            fork.root,
            python,
            test_files,
            runner=runner,
            timeout_s=ctx.options.test_timeout_s,
            baseline=fork.baseline,
            listed=ctx.files().keys(),
        )
    finally:
        await asyncio.to_thread(fork.close)
    for n in result.notes:
        ctx.note("reproduction", n)
    for path, scores in result.line_scores.items():
        ctx.suspicious[path] = [
            (a, b, max(scores.get(i, 0.0) for i in range(a, b + 1)))
            for a, b in suspicious_ranges(scores)
        ]
    return sbfl_evidence(result)


async def run_root_cause(ctx: RunContext, evidence: Sequence[FileEvidence]) -> None:
    """Rank on all evidence (static, SBFL, model relevance), then judge the root cause."""
    # only files of the repository listing (coverage may name others)
    ctx.ranked = [r for r in rank_files(list(evidence)) if r.path in ctx.files()]
    _ranked_event(ctx, "root_cause", "ranked files (static, SBFL and model relevance)")
    ctx.root_cause = await root_cause(ctx)
    if ctx.root_cause is not None:
        rc = ctx.root_cause
        ctx.emit(
            "root_cause",
            "root_cause",
            f"{rc.path}:{rc.start}-{rc.end} ({rc.origin}): {rc.explanation}",
            **rc.to_dict(),
        )


async def run_fix(ctx: RunContext) -> None:
    """Candidate fixes, written against the pristine sources (no sandbox needed).

    The sources come from the sandbox's pristine baseline when there is one,
    else from the input tree, so the staged driver runs this in its model
    stage, where waiting on the model's rewrite holds no core.
    """
    ctx.candidates = await propose_fixes(ctx)
    ctx.emit(
        "note",
        "fix",
        f"{len(ctx.candidates)} candidate fix(es) limited to the localized region",
    )


async def run_validation(ctx: RunContext) -> None:
    ctx.validation = await validate_candidates(ctx, ctx.candidates)
    ctx.emit("note", "validation", ctx.validation.summary)


def complete_report(
    ctx: RunContext, walls: dict[str, float], critical_path: Sequence[str]
) -> RunReport:
    """The run's report from its context, its stages' wall times and critical path."""
    report = build_report(ctx, walls)
    report.data["critical_path"] = list(critical_path)
    failures = model_failures(ctx.recorder.records)
    report.data["degraded"] = failures.degraded
    report.data["model_calls"] = {"failed": failures.failed, "total": failures.total}
    if failures.degraded:
        report.data["verdict_head"] = failures.line()
    report.data["environment"] = ctx.options.python.to_dict() if ctx.options.python else None
    rep = ctx.reproduction
    report.data["reproduction"]["status"] = rep.status if rep else "none"
    report.data["reproduction"]["output_tail"] = rep.output_tail if rep else ""
    ctx.emit("run_finished", "run", "done", validated=report.validated)
    return report
