"""The file-relevance stage: the model reads the top candidates' file chunks.

Scatter-gather over chunks of the files the static analysis ranked highest
(:func:`fixbugs.localize.locate.relevance_evidence`); without a model, or
or when the run does not take the ``relevance`` step, it adds nothing.
"""

from __future__ import annotations

from dataclasses import replace

from fixbugs.inputs import BugInputs
from fixbugs.localize.evidence import FileEvidence
from fixbugs.localize.locate import RELEVANCE, relevance_evidence
from fixbugs.localize.traceback import ParsedFailure
from fixbugs.run.context import RunContext
from fixbugs.run.record import Analysis

__all__ = ["run_relevance"]


async def run_relevance(
    inputs: BugInputs, analysis: Analysis, ctx: RunContext
) -> tuple[FileEvidence, ...]:
    """Model relevance over the top candidates' file chunks (scatter-gather)."""
    model = ctx.step_model("relevance")
    if model is None:
        return ()
    res = await relevance_evidence(  # the shared localization settings (RELEVANCE)
        model,
        inputs.report.title + "\n" + inputs.report.body,
        analysis.failure or ParsedFailure(),
        analysis.static,
        ctx.files(),
        settings=replace(
            RELEVANCE,
            top_n=ctx.options.relevance_top_n,
            deadline_s=ctx.step_deadline_s("relevance"),
        ),
        clock=ctx.clock,
        stage="file_relevance",
    )
    for n in res.notes:
        ctx.journal.note("file_relevance", n)
    return tuple(res.evidence)
