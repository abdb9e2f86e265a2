"""Structured evidence with provenance, and its reducers."""

from agentrt.evidence._model import (
    EVIDENCE_SCHEMA,
    Evidence,
    EvidenceKind,
    Provenance,
    parse_evidence,
)
from agentrt.evidence._reducers import (
    Digest,
    dedupe,
    digest,
    group_by_trace,
    order_by_time,
    split_by_service,
)

__all__ = [
    "EVIDENCE_SCHEMA",
    "Digest",
    "Evidence",
    "EvidenceKind",
    "Provenance",
    "dedupe",
    "digest",
    "group_by_trace",
    "order_by_time",
    "parse_evidence",
    "split_by_service",
]
