"""JSON values as agentrt writes them: the one place their type is spelled.

``JsonValue`` is what :func:`json.dumps` takes: scalars, sequences (lists,
tuples) and string-keyed mappings of JSON values. The containers are the
read-only ``Sequence`` and ``Mapping``, so a ``list[int]`` or a
``dict[str, float]`` is a JSON value as it is. What :func:`json.loads`
returns is still ``Any``: that is the edge where untyped data comes in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

__all__ = ["JsonObject", "JsonScalar", "JsonValue"]

JsonScalar: TypeAlias = str | int | float | bool | None
JsonValue: TypeAlias = JsonScalar | Sequence["JsonValue"] | Mapping[str, "JsonValue"]
JsonObject: TypeAlias = Mapping[str, JsonValue]
