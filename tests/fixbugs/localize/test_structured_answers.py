"""The model's structured answers are pydantic models, and their schemas are the ones
the prompts and grammars carried before (so the model sees exactly the same request)."""

from __future__ import annotations

import json

from agentrt.llm import schema_of
from fixbugs.localize.relevance import RelevanceAnswer
from fixbugs.stages.fix import FixAnswer


# the hand-written schemas these types replace, as they were sent: every property required
def _object(**properties: object) -> dict[str, object]:
    return {"type": "object", "properties": properties, "required": list(properties)}


STR, INT, BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
RELEVANCE_SCHEMA = _object(
    files={"type": "array", "items": _object(path=STR, relevant=BOOL, reason=STR)}
)
FIX_SCHEMA = _object(start_line=INT, end_line=INT, replacement=STR)


def test_the_derived_schemas_are_byte_for_byte_the_old_ones() -> None:
    assert json.dumps(schema_of(RelevanceAnswer)) == json.dumps(RELEVANCE_SCHEMA)
    assert json.dumps(schema_of(FixAnswer)) == json.dumps(FIX_SCHEMA)


def test_answers_validate_into_typed_values() -> None:
    fix = FixAnswer.model_validate_json('{"start_line": "3", "end_line": 4, "replacement": "x"}')
    assert (fix.start_line, fix.end_line) == (3, 4)
    rel = RelevanceAnswer.model_validate_json(
        '{"files": [{"path": "a.py", "relevant": true, "reason": "r"}]}'
    )
    assert rel.files[0].relevant is True
