"""The model's structured answers are pydantic models, and their schemas are the ones
the prompts and grammars carried before (so the model sees exactly the same request)."""

from __future__ import annotations

import json

from agentrt.llm import schema_of
from fixbugs.localize.relevance import RelevanceAnswer


# the hand-written schemas these types replace, as they were sent: every property required
def _object(**properties: object) -> dict[str, object]:
    return {"type": "object", "properties": properties, "required": list(properties)}


STR, BOOL = {"type": "string"}, {"type": "boolean"}
RELEVANCE_SCHEMA = _object(
    files={"type": "array", "items": _object(path=STR, relevant=BOOL, reason=STR)}
)


def test_the_derived_schemas_are_byte_for_byte_the_old_ones() -> None:
    assert json.dumps(schema_of(RelevanceAnswer)) == json.dumps(RELEVANCE_SCHEMA)


def test_answers_validate_into_typed_values() -> None:
    rel = RelevanceAnswer.model_validate_json(
        '{"files": [{"path": "a.py", "relevant": true, "reason": "r"}]}'
    )
    assert rel.files[0].relevant is True
