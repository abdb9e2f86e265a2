"""The one final judgment call: resolve conflicts and rank explanations.

Map calls gather evidence cheaply and in parallel; judgment needs everything
at once, so it is a single call over the digest (reduce hierarchically first
when the digest exceeds its context budget).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentrt.evidence.model import Evidence
from agentrt.evidence.reducers import Digest
from agentrt.llm.protocol import ChatModel
from agentrt.llm.types import ChatRequest, ChatResult

__all__ = ["JUDGMENT_SCHEMA", "Judgment", "Ranked", "judge", "judgment_request"]

JUDGMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["ranked"],
    "properties": {
        "ranked": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["explanation", "score"],
                "properties": {
                    "explanation": {"type": "string"},
                    "score": {"type": "number"},
                    "evidence": {"type": "array", "items": {"type": "integer"}},
                },
            },
        },
        "conflicts": {"type": "array", "items": {"type": "string"}},
    },
}

_SYSTEM = (
    "You judge a debugging investigation. Evidence lines are numbered [i]. "
    "Resolve conflicting evidence, then rank candidate explanations by how well "
    "the evidence supports them; cite evidence numbers. Answer JSON only."
)


@dataclass(frozen=True, slots=True)
class Ranked:
    explanation: str
    score: float
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True, slots=True)
class Judgment:
    ranked: tuple[Ranked, ...]  # best first
    conflicts: tuple[str, ...]
    result: ChatResult


def judgment_request(question: str, evidence: Digest, *, max_tokens: int = 512) -> ChatRequest:
    prompt = f"Question: {question}\n\nEvidence:\n{evidence.render()}"
    return ChatRequest.of(
        prompt, system=_SYSTEM, max_tokens=max_tokens, json_schema=JUDGMENT_SCHEMA, stage="judge"
    )


async def judge(
    client: ChatModel, question: str, evidence: Digest, *, max_tokens: int = 512
) -> Judgment:
    """One structured call; citations that point at no evidence are dropped."""
    result = await client.complete(judgment_request(question, evidence, max_tokens=max_tokens))
    answer = result.parsed if isinstance(result.parsed, dict) else {}
    ranked = []
    for r in answer.get("ranked") or []:
        if not isinstance(r, dict) or not isinstance(r.get("explanation"), str):
            continue
        score = r.get("score")
        cites = [i for i in r.get("evidence") or [] if isinstance(i, int)]
        ranked.append(
            Ranked(
                r["explanation"],
                float(score) if isinstance(score, int | float) else 0.0,
                tuple(evidence.items[i] for i in cites if 0 <= i < len(evidence.items)),
            )
        )
    ranked.sort(key=lambda r: -r.score)
    conflicts = tuple(c for c in answer.get("conflicts") or [] if isinstance(c, str))
    return Judgment(tuple(ranked), conflicts, result)
