"""Typed structured output: a pydantic model class in, an instance of it out."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from agentrt import FakeClock, StructuredOutputError
from agentrt.flow import RetryingModel
from agentrt.llm import ChatRequest, FakeModel, schema_of


class Verdict(BaseModel):
    """A docstring for developers: not in the schema."""

    path: str
    relevant: bool = Field(description="true when the bug is in this file")


class Answer(BaseModel):
    files: list[Verdict]
    start_line: int


def _says(text: str):  # type: ignore[no-untyped-def]
    return lambda _inp: text


def test_the_schema_is_derived_compact_and_self_contained() -> None:
    schema = schema_of(Answer)
    # as a prompt carries it: no $defs or $ref, no titles, type/properties/required first
    assert schema == {
        "type": "object",
        "properties": {
            "files": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "relevant": {
                            "type": "boolean",
                            "description": "true when the bug is in this file",
                        },
                    },
                    "required": ["path", "relevant"],
                },
            },
            "start_line": {"type": "integer"},
        },
        "required": ["files", "start_line"],
    }
    assert list(schema) == ["type", "properties", "required"]
    assert ChatRequest.of("q", output_type=Answer).json_schema == schema


async def test_the_answer_comes_back_as_an_instance_through_the_flow_layer() -> None:
    clock = FakeClock()
    text = json.dumps({"files": [{"path": "a.py", "relevant": True}], "start_line": "12"})
    model = RetryingModel(FakeModel(clock=clock, responder=_says(text)))
    async with clock.autojumping():
        result = await model.complete(ChatRequest.of("q", output_type=Answer))
    answer = result.output(Answer)
    assert isinstance(answer, Answer)
    assert answer.start_line == 12 and answer.files[0] == Verdict(path="a.py", relevant=True)
    with pytest.raises(StructuredOutputError, match="no Verdict"):
        result.output(Verdict)


async def test_the_default_responder_satisfies_the_derived_schema() -> None:
    clock = FakeClock()
    model = FakeModel(clock=clock)
    async with clock.autojumping():
        result = await model.complete(ChatRequest.of("q", output_type=Answer))
    assert isinstance(result.output(Answer).files, list)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"files": [], "start_line": "twelve"}', "not a Answer (start_line"),
        ('{"files": [{"path": "a.py"}], "start_line": 1}', "files.0.relevant"),
        ("not json", "not the requested JSON"),
    ],
)
async def test_an_answer_of_another_shape_is_one_clear_error(text: str, said: str) -> None:
    clock = FakeClock()
    model = FakeModel(clock=clock, responder=_says(text))
    async with clock.autojumping():
        with pytest.raises(StructuredOutputError) as caught:
            await model.complete(ChatRequest.of("q", output_type=Answer))
    message = str(caught.value)
    assert said in message and "\n" not in message
