"""Typed structured output: a pydantic model class in, an instance of it out.

A request names its ``output_type``; the backends that constrain or
instruct the model get its JSON schema (:func:`schema_of`), and the client
validates the answer into an instance (:func:`parse_output`). The schema is
the compact form a prompt can carry: references inlined, titles and the
classes' docstrings dropped (fields' descriptions stay), keys in the order
``type``, ``properties``, ``items``, ``required``.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ValidationError

from agentrt._errors import StructuredOutputError

__all__ = ["parse_output", "schema_of"]

_KEY_ORDER = ("type", "properties", "items", "required")


def schema_of(kind: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``kind``, self-contained and compact."""
    full = kind.model_json_schema()
    defs: dict[str, Any] = full.pop("$defs", {})
    # a class's docstring (pydantic's model-level description) is for its
    # developers; what the model should read goes in a field's description
    for model_level in (full, *defs.values()):
        model_level.pop("description", None)
    compact: dict[str, Any] = _compact(full, defs)
    return compact


def _compact(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_compact(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _compact(defs[ref.removeprefix("#/$defs/")], defs)
    out: dict[str, Any] = {}
    for key in (*[k for k in _KEY_ORDER if k in node], *[k for k in node if k not in _KEY_ORDER]):
        if key == "title":
            continue
        value = node[key]
        # the names under "properties" are fields, not schema keywords
        if key == "properties":
            out[key] = {name: _compact(sub, defs) for name, sub in value.items()}
        else:
            out[key] = _compact(value, defs)
    return out


def parse_output(text: str, kind: type[BaseModel], model: str) -> BaseModel:
    """``text`` validated into a ``kind``; :class:`StructuredOutputError` in one line if not."""
    try:
        return kind.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the answer"
        if first["type"] == "json_invalid":
            snippet = text[:60].replace("\n", " ")
            raise StructuredOutputError(
                f"model {model!r} answered text that is not the requested JSON "
                f"({snippet!r}); use a model that supports structured output or retry"
            ) from None
        raise StructuredOutputError(
            f"model {model!r} answered JSON that is not a {kind.__name__} "
            f"({where}: {first['msg']}); got {json.dumps(text[:60])}"
        ) from None
