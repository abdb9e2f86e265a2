"""The file-relevance stage: the model reads the top candidates' file chunks.

Scatter-gather over chunks of the files the static analysis ranked highest
(:func:`fixbugs.localize.locate.relevance_evidence`); without a model, or
with ``use_model`` off, it adds nothing.
"""

from __future__ import annotations

from dataclasses import replace

from fixbugs.inputs import BugInputs
from fixbugs.localize.evidence import Evidence as FileEvidence
from fixbugs.localize.locate import RELEVANCE, relevance_evidence
from fixbugs.localize.traceback import ParsedFailure
from fixbugs.run.context import RunContext
from fixbugs.run.record import Analysis

__all__ = ["run_relevance"]


async def run_relevance(
    inputs: BugInputs, analysis: Analysis, ctx: RunContext
) -> tuple[FileEvidence, ...]:
    """Model relevance over the top candidates' file chunks (scatter-gather)."""
    if ctx.models is None or not ctx.options.use_model:
        return ()
    res = await relevance_evidence(  # the shared localization settings (RELEVANCE)
        ctx.models.map,
        inputs.report.title + "\n" + inputs.report.body,
        analysis.failure or ParsedFailure(),
        analysis.static,
        ctx.files(),
        settings=replace(RELEVANCE, top_n=ctx.options.relevance_top_n),
        clock=ctx.clock,
        stage="file_relevance",
    )
    for n in res.notes:
        ctx.journal.note("file_relevance", n)
    return tuple(res.evidence)
