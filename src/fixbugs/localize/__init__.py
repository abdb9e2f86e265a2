"""Localization: which files (and lines) the bug is in, with the reasons why."""

from fixbugs.localize.evidence import KINDS, FileEvidence
from fixbugs.localize.locate import (
    bm25_baseline,
    bug_summary,
    static_evidence,
    traceback_baseline,
)
from fixbugs.localize.rank import DEFAULT_WEIGHTS, RankedFile, rank_files
from fixbugs.localize.relevance import RelevanceAnswer, RelevanceResult, model_relevance
from fixbugs.localize.sbfl import SbflResult, Spectrum, ochiai, run_sbfl, sbfl_evidence
from fixbugs.localize.signals import (
    bm25_evidence,
    import_evidence,
    naming_evidence,
    symbol_evidence,
    traceback_evidence,
)
from fixbugs.localize.traceback import Frame, ParsedFailure, parse_failure

__all__ = [
    "DEFAULT_WEIGHTS",
    "KINDS",
    "FileEvidence",
    "Frame",
    "ParsedFailure",
    "RankedFile",
    "RelevanceAnswer",
    "RelevanceResult",
    "SbflResult",
    "Spectrum",
    "bm25_baseline",
    "bm25_evidence",
    "bug_summary",
    "import_evidence",
    "model_relevance",
    "naming_evidence",
    "ochiai",
    "parse_failure",
    "rank_files",
    "run_sbfl",
    "sbfl_evidence",
    "static_evidence",
    "symbol_evidence",
    "traceback_baseline",
    "traceback_evidence",
]
