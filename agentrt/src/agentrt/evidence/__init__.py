"""Structured evidence with provenance, its reducers, and the final judgment call."""

from agentrt.evidence.judgment import JUDGMENT_SCHEMA, Judgment, Ranked, judge, judgment_request
from agentrt.evidence.model import (
    EVIDENCE_SCHEMA,
    Evidence,
    EvidenceKind,
    Provenance,
    parse_evidence,
)
from agentrt.evidence.reducers import (
    Digest,
    dedupe,
    digest,
    group_by_trace,
    order_by_time,
    split_by_service,
)

__all__ = [
    "EVIDENCE_SCHEMA",
    "JUDGMENT_SCHEMA",
    "Digest",
    "Evidence",
    "EvidenceKind",
    "Judgment",
    "Provenance",
    "Ranked",
    "dedupe",
    "digest",
    "group_by_trace",
    "judge",
    "judgment_request",
    "order_by_time",
    "parse_evidence",
    "split_by_service",
]
