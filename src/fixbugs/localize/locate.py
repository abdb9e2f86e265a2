"""The localization pieces the agent's stages share: static signals, model relevance, baselines.

The pieces are shared, not copied: the agent (:mod:`fixbugs.run.agent`) runs
them as graph stages — analysis calls :func:`static_evidence`, file
relevance calls :func:`relevance_evidence` with :data:`RELEVANCE`, the
reproduction stage adds SBFL, and the root cause takes
:func:`fixbugs.localize.regions.suspicious_regions` of the ranking.
``fixbugs eval --localize-only`` runs those same stages (``run_bug`` up to
the root cause), so the eval measures the agent's localizer. The two
baselines the eval reports (traceback frames only, BM25 only) are the same
signals ranked alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentrt import Clock
from agentrt.llm import ChatModel
from fixbugs.index import as_index
from fixbugs.localize.evidence import FileEvidence
from fixbugs.localize.names import name_evidence, path_evidence
from fixbugs.localize.neighbourhood import neighbour_evidence
from fixbugs.localize.rank import RankedFile, rank_files
from fixbugs.localize.relevance import RelevanceResult, model_relevance
from fixbugs.localize.report_signals import (
    command_evidence,
    literal_evidence,
    quoted_code_evidence,
)
from fixbugs.localize.report_text import evidence_text
from fixbugs.localize.signals import (
    bm25_evidence,
    import_evidence,
    naming_evidence,
    symbol_evidence,
    traceback_evidence,
)
from fixbugs.localize.snippet_calls import call_evidence
from fixbugs.localize.traceback import ParsedFailure, anchor_frames, parse_failure
from fixbugs.pyenv.testrun import files_of_tests

__all__ = [
    "RELEVANCE",
    "RelevanceSettings",
    "bm25_baseline",
    "bug_summary",
    "crash_evidence",
    "relevance_evidence",
    "traceback_baseline",
]


def static_evidence(
    files: Mapping[str, str], report: str, failure: ParsedFailure, test_ids: Sequence[str]
) -> list[FileEvidence]:
    """Every static signal of the report and the repository, without a model.

    The failing tests are the report's, then ``test_ids`` (those of the test
    command, :attr:`fixbugs.pyenv.testrun.TestCommand.test_ids`). The text
    signals read the report without its pytest warning entries and its
    environment listing (:func:`~fixbugs.localize.report_text.evidence_text`); ``failure``,
    parsed from the whole text, keeps those under a summary's header as
    warnings, which weigh little.
    """
    report = evidence_text(report)
    tests = [t for t in files_of_tests([*failure.failing_tests, *test_ids]) if t in files]
    failure = anchor_frames(failure, files)
    index = as_index(files)
    used = [*call_evidence(index, report), *name_evidence(index, report)]
    return [
        *used,
        *neighbour_evidence(index, used),
        *path_evidence(report, files.keys(), located=_located(failure)),
        *traceback_evidence(failure),
        *import_evidence(tests, files),
        *naming_evidence(tests, files),
        *symbol_evidence(report, files, exclude=_frame_functions(failure), index=index),
        *bm25_evidence(report, files),
        *quoted_code_evidence(report, files, failure),
        *literal_evidence(report, files),
        *command_evidence(report, files),
    ]


def crash_evidence(output: str, files: Mapping[str, str]) -> list[FileEvidence]:
    """The project frames of a traceback the reproduction printed, as traceback evidence.

    A reproduction that crashed shows where the code ran and failed, on this
    tree (no other version's line numbers): the same signal as a traceback
    the report pastes, which a report in words lacks.
    """
    return traceback_evidence(anchor_frames(parse_failure(output, files.keys()), files))


def _located(failure: ParsedFailure) -> set[str]:
    """Files the failure's frames and warnings already map to."""
    return {f.path for f in (*failure.frames, *failure.warnings) if f.path}


def _frame_functions(failure: ParsedFailure) -> set[str]:
    """Functions of frames mapped to a file: the traceback signal already counts them."""
    return {f.function for f in failure.frames if f.path and f.function}


def bug_summary(report: str, failure: ParsedFailure, *, max_chars: int = 900) -> str:
    """What the model needs of the report: its title, the exception and the frames."""
    lines = [ln for ln in report.splitlines() if ln.strip()]
    title = lines[0].lstrip("# ").strip() if lines else ""
    parts = [title]
    if failure.exception_type:
        parts.append(
            f"Exception: {failure.exception_type}: {failure.exception_message or ''}".strip()
        )
    parts += [ln.strip() for ln in lines if ln.startswith("E ")][:6]
    parts += [f"at {f.path}:{f.line} in {f.function}" for f in failure.project_frames()][-4:]
    return "\n".join(parts)[:max_chars]


@dataclass(frozen=True, slots=True)
class RelevanceSettings:
    """How much the model is asked: the top ``top_n`` files, packed into at most
    ``max_chunks`` calls of ``budget_tokens`` each, waited for ``deadline_s``."""

    top_n: int = 8
    budget_tokens: int = 700
    max_chunks: int = 2
    deadline_s: float | None = 60.0


RELEVANCE = RelevanceSettings()


async def relevance_evidence(
    model: ChatModel,
    report: str,
    failure: ParsedFailure,
    static: Sequence[FileEvidence],
    files: Mapping[str, str],
    *,
    settings: RelevanceSettings = RELEVANCE,
    clock: Clock | None = None,
    stage: str = "file_relevance",
) -> RelevanceResult:
    """Model relevance over the best static candidates (advisory evidence)."""
    candidates = [r.path for r in rank_files(static, limit=settings.top_n)]
    if not candidates:
        return RelevanceResult((), 0, 0, ())
    return await model_relevance(
        model,
        bug_summary(report, failure),
        candidates,
        files,
        budget_tokens=settings.budget_tokens,
        max_chunks=settings.max_chunks,
        deadline_s=settings.deadline_s,
        clock=clock,
        stage=stage,
    )


def traceback_baseline(files: Mapping[str, str], report: str) -> list[RankedFile]:
    """Baseline: the report's traceback frames alone (deepest project frame first)."""
    return rank_files(traceback_evidence(parse_failure(report, files.keys())))


def bm25_baseline(files: Mapping[str, str], report: str) -> list[RankedFile]:
    """Baseline: BM25 of the report against the files, alone."""
    return rank_files(bm25_evidence(report, files))
